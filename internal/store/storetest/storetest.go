// Package storetest is the behaviour every store.Store implementation
// must have, as one suite of tests: each implementation's own tests call
// Run with a function that opens a fresh, empty store, so that SQLite and
// PostgreSQL are held to exactly the same checks.
//
// Only tests import this package.
package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Options are what a test asks of the store it opens. Implementations
// map them onto their own options, with the same meaning as sqlite's.
type Options struct {
	// Now is the store's clock; nil means time.Now.
	Now func() time.Time
	// MaxCalls bounds the audit log by count: 0 means the
	// implementation's default, negative no bound.
	MaxCalls int
	// MaxCallAge bounds the audit log by age: 0 means the
	// implementation's default, negative no bound.
	MaxCallAge time.Duration
}

// An Opener opens a fresh, empty store with o, closed when t ends.
type Opener func(t *testing.T, o Options) store.Store

// Run runs the suite against the stores open makes, each test on a store
// of its own.
func Run(t *testing.T, open Opener) {
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"Catalog", testCatalog},
		{"ZeroTimeUsesClock", testZeroTimeUsesClock},
		{"Pins", testPins},
		{"Drifts", testDrifts},
		{"PinRemovesMatchingDrift", testPinRemovesMatchingDrift},
		{"Score", testScore},
		{"Schedule", testSchedule},
		{"RecordCallRoundTrip", testRecordCallRoundTrip},
		{"CallsFilter", testCallsFilter},
		{"CallsDefaultLimit", testCallsDefaultLimit},
		{"RetentionByCount", testRetentionByCount},
		{"RecordCallsBatch", testRecordCallsBatch},
		{"RetentionByAge", testRetentionByAge},
		{"RetentionDisabled", testRetentionDisabled},
		{"RecordCallConcurrent", testRecordCallConcurrent},
		{"RecordCallOddText", testRecordCallOddText},
		{"Quota", testQuota},
		{"QuotaConcurrent", testQuotaConcurrent},
		{"QuotaWindows", testQuotaWindows},
		{"QuotaInvalid", testQuotaInvalid},
		{"Embeddings", testEmbeddings},
		{"EmbeddingsMany", testEmbeddingsMany},
		{"Secret", testSecret},
		{"Approvals", testApprovals},
		{"ApprovalOnce", testApprovalOnce},
		{"ApprovalRetention", testApprovalRetention},
		{"FlowMarks", testFlowMarks},
		{"Grants", testGrants},
		{"GrantLease", testGrantLease},
		{"PendingLogins", testPendingLogins},
		{"PendingLoginOnce", testPendingLoginOnce},
		{"Closed", testClosed},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// Clock is a settable clock for Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at a fixed time.
func NewClock() *Clock {
	return &Clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// When is a fixed time with nanoseconds, to show they survive storage.
var When = time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.UTC)

// NewPin returns a pin of server's tool at When with a definition naming hash.
func NewPin(server, tool, hash string) store.Pin {
	return store.Pin{Server: server, Tool: tool, Hash: hash,
		Definition: []byte(`{"name":"` + tool + `","hash":"` + hash + `"}`), ApprovedAt: When}
}

// NewDrift returns a drift of server's tool seen at When.
func NewDrift(server, tool, hash string) store.Drift {
	return store.Drift{Server: server, Tool: tool, Hash: hash,
		Definition: []byte(`{"name":"` + tool + `","hash":"` + hash + `"}`), SeenAt: When}
}

// NewScore returns a score of server updated at When.
func NewScore(server string, v float64) store.Score {
	return store.Score{Server: server, Value: v, UpdatedAt: When}
}

// NewCall returns an audit row of server's tool at t (zero: the store's now).
func NewCall(server, tool string, t time.Time) *store.Call {
	return &store.Call{
		Time:       t,
		Tool:       server + ":" + tool,
		Server:     server,
		Caller:     "claude",
		ClientName: "Claude Code",
		Profile:    "readonly",
		ArgShape:   `{"q":"string","n":"number"}`,
		Outcome:    "tool_error",
		Code:       "E42",
		Latency:    1234567 * time.Nanosecond,
		BytesIn:    10,
		BytesOut:   2000,
		Secrets:    "arguments:github-token:flagged",
		Approval:   "approved a1 by ui:operator at 2026-03-04T05:06:07Z",
		Run:        "3f2a9c",
		As:         "octocat",
		Grant:      "own",
	}
}
