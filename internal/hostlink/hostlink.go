// Package hostlink is how the gateway, its status page, its control API,
// its metrics and the command line reach what a running [host.Host] keeps
// for them and a Go program driving an agent does not need: readiness
// behind a load balancer, counters for metrics, calls in flight, the
// store's shared secrets, the OAuth callback, the named clients and
// profiles, callers' own grants, a server's definitions as it sent them,
// discovery on demand. host's exported API names none of it.
//
// host registers its link once, at init ([Set]); [Of] returns a Host's.
// It imports nothing of host (host imports it): what only these callers
// read has its type here.
package hostlink

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Link is what the gateway and the command line reach of a running Host.
type Link interface {
	// Readiness reports whether the Host is ready to take traffic behind
	// a load balancer: its store answers (within a second, when the store
	// can be pinged) and takes the audit log's rows (none waits for a
	// retry), and at least one server's catalogue is loaded, or no server
	// is enabled. A Host that is not ready still serves what it holds.
	Readiness(ctx context.Context) error
	// StoreUp reports whether the store answered its last use (a write
	// of the audit log, a re-read of pins, a readiness check) and the
	// audit log has no rows waiting because the store refused them. It
	// is true for a Host without a store.
	StoreUp() bool
	// AuditStats returns the counts of the audit log's queues; zero
	// without a store.
	AuditStats() AuditStats
	// CallsInFlight returns the calls in flight by server.
	CallsInFlight() map[string]int
	// LiveCalls returns the tool calls in flight, oldest first.
	LiveCalls() []LiveCall
	// SpillBytes returns the bytes of spilled results held for paging.
	SpillBytes() int
	// ApprovalsChanged re-reads the approved definitions at once (a
	// running Host otherwise does so every second, or on the store's
	// change feed): an approval made through the store by this process is
	// in force when it returns.
	ApprovalsChanged()
	// Secret returns the store's secret named name: the same bytes for
	// every Host sharing the store, made by the first to ask; nil and no
	// error for a Host without a store.
	Secret(ctx context.Context, name string) ([]byte, error)
	// OAuthCallback returns the handler of the redirects that end the
	// logins the Host runs, when its OAuth options route them to the
	// gateway (a public URL); else nil.
	OAuthCallback() http.Handler
	// Clients returns the configuration's named clients in force.
	Clients() []*config.Client
	// Profile returns the configuration's profile named name in force,
	// or nil.
	Profile(name string) *config.Profile
	// CallerGrants lists the callers logged in as themselves to a server
	// with "oauth.perCaller".
	CallerGrants(ctx context.Context, server string) ([]CallerGrant, error)
	// RawTool returns a tool's definition exactly as its server sent it,
	// before it was cleaned, for an operator to inspect; never show it to
	// a model. name is a model-facing name or a canonical ID, which also
	// finds tools that were refused or held back.
	RawTool(name string) (json.RawMessage, error)
	// Refresh discovers the named servers again (every enabled server
	// when none is named), whatever their saved catalogues say, in
	// parallel, and returns their failures joined.
	Refresh(ctx context.Context, servers ...string) error
	// ServerPins returns what a lockfile pins of each enabled, usable
	// server, in the configuration's order.
	ServerPins() []ServerPins
}

// ErrNotReady is wrapped by what Readiness returns.
var ErrNotReady = errors.New("not ready")

// Set at init by host.
var (
	of        func(h any) Link
	withLock  func(opts any, lock map[string]ServerPins)
	withStore func(opts any, st store.Store)
)

// Set is called by host's init, once, with the functions that return a
// Host's link and that set a lock and a store in its Options.
func Set(link func(h any) Link, lock func(opts any, lock map[string]ServerPins), st func(opts any, st store.Store)) {
	of, withLock, withStore = link, lock, st
}

// WithStore makes the Host that opts (a *host.Options) opens use st, a
// state store already open, in place of the one Open would open,
// whatever StateDir and Ephemeral say; Close does not close it. It
// returns opts.
func WithStore[O any](opts O, st store.Store) O {
	withStore(opts, st)
	return opts
}

// WithLock makes the Host that opts (a *host.Options) opens serve only
// what lock pins, by server name (`serve --lock`; see docs/PINS.md): a
// server it does not name, or whose launch differs from its, is held and
// never started; a tool or the instructions whose definition differs from
// the lock's hash are held, and no approval releases them; a prompt or
// template that differs is left out. The store's approvals do not apply.
// A nil lock serves what the store approves.
func WithLock(opts any, lock map[string]ServerPins) { withLock(opts, lock) }

// Of returns the link of h, a *host.Host.
func Of(h any) Link { return of(h) }

// AuditStats are the counts of the audit log's queues, for metrics.
type AuditStats struct {
	// Waiting is how many rows the store refused and are kept for
	// retry (at most 10,000; past that, the oldest are dropped).
	Waiting int64
	// Dropped is how many rows were lost since Open: a queue was full,
	// the call ended after Close, or the store still refused them at
	// Close.
	Dropped int64
}

// LiveCall is a tool call in flight.
type LiveCall struct {
	ID     uint64    `json:"id"`
	Start  time.Time `json:"start"`
	Client string    `json:"client,omitempty"` // the caller as it authenticated ("" for the operator)
	// ClientName is the name the client gave itself.
	ClientName string `json:"clientName,omitempty"`
	Server     string `json:"server"`
	Tool       string `json:"tool"` // canonical ID
	// Progress and Total are the last progress notification's, when the
	// caller asked for progress; Message its message, escaped.
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// CallerGrant is one caller's own grant to a server, as the status page
// shows it: who, as whom the server knows them, since when.
type CallerGrant struct {
	Caller  string
	Subject string // who the server knows the caller as; "" when its tokens do not say
	Saved   string // RFC 3339
}

// ServerPins is what a lockfile pins of one server: hashes of its launch
// and of each definition it offers (internal/drift's canonical forms).
type ServerPins struct {
	Server string
	// Launch is the hash of the server's launch, its package included.
	Launch string
	// Package is its npx-style launch's package, resolved to an exact
	// version; nil for other launches.
	Package *config.LaunchPackage
	// Instructions is the hash of its instructions; "" for none.
	Instructions string
	// Tools, Prompts and Templates map each offered tool, prompt and
	// resource template by name to the hash of its definition.
	Tools, Prompts, Templates map[string]string
	// Held reports whether the server is held (its launch is not
	// approved); Known whether its lists are known (discovered, or read
	// from its saved catalogue).
	Held  bool
	Known bool
}

// InjectionApprovalKey is the store key (a pin's or a drift row's tool)
// under which the approval of a tool held for matching an injection
// pattern is kept.
func InjectionApprovalKey(tool string) string { return ingest.ApprovalKey(tool) }
