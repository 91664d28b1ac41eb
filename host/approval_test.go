package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// gateRig is a host over ModeGitHub's server, configured as "github" (so
// that the built-in preset labels its tools), with a store, a settable
// clock and the call records kept.
type gateRig struct {
	h    *host.Host
	cfg  *config.Config
	st   store.Store
	mark string // the server's record of the pull requests it opened
	mu   sync.Mutex
	now  time.Time
	recs []host.CallRecord
}

func openGate(t *testing.T, policy map[string]any, approver host.Approver) *gateRig {
	t.Helper()
	return openGateWith(t, nil, policy, approver)
}

// openGateWith is openGate with more servers beside "github".
func openGateWith(t *testing.T, extra, policy map[string]any, approver host.Approver) *gateRig {
	t.Helper()
	r := &gateRig{mark: filepath.Join(t.TempDir(), "prs"), now: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	gh := child(t, testkit.ModeGitHub, nil)
	gh["env"].(map[string]string)[testkit.MarkVar] = r.mark
	gh["sandbox"] = testSandbox
	servers := map[string]any{"github": gh}
	for k, v := range extra {
		servers[k] = v
	}
	doc := map[string]any{"mcpServers": servers}
	if policy != nil {
		doc["policy"] = policy
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), &sqlite.Options{Now: r.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r.st, r.cfg = st, cfg
	r.h = openWith(t, cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, Clock: r.clock, Approve: approver, OnCall: func(c host.CallRecord) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.recs = append(r.recs, c)
	}}, st))
	return r
}

func (r *gateRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *gateRig) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = r.now.Add(d)
}

func (r *gateRig) lastGate() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recs[len(r.recs)-1].Gate
}

// prs returns what the server's create_pull_request was given.
func (r *gateRig) prs() string {
	data, _ := os.ReadFile(r.mark)
	return string(data)
}

// callAs calls name as a legacy client's session.
func (r *gateRig) callAs(session, name, args string) (*host.Result, error) {
	v := r.h.View(host.Caller{Client: "claude", Session: session})
	return v.Call(context.Background(), name, json.RawMessage(args), nil)
}

// auditRows waits for the audit log to hold n rows with an approval note
// and returns them, newest first.
func (r *gateRig) auditRows(t *testing.T, n int) []store.Call {
	t.Helper()
	var rows []store.Call
	var err error
	// The audit log writes on its own goroutine.
	if !proc.Eventually(30*time.Second, func() bool {
		var all []store.Call
		if all, err = r.st.Calls(context.Background(), store.CallFilter{}); err != nil {
			return true
		}
		rows = rows[:0]
		for _, c := range all {
			if c.Approval != "" {
				rows = append(rows, c)
			}
		}
		return len(rows) >= n
	}) {
		t.Fatalf("audit rows with an approval note: %d, want %d", len(rows), n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

const prArgs = `{"title":"Update README","body":"` + testkit.PrivateFile + `"}`

// TestFlowGuardGitHubPattern reproduces the incident in which a public
// issue made an agent leak a private repository through a pull request:
// in one session the agent reads the poisoned issue (untrusted content),
// then the private file (private data); the pull request (outward) is
// refused, the refusal names both earlier calls, and the server never
// sees it. Another session, which read only the issue, may open one.
func TestFlowGuardGitHubPattern(t *testing.T) {
	t.Parallel()
	r := openGate(t, map[string]any{"flow": map[string]any{"mode": "refuse"}}, nil)
	if _, err := r.callAs("s1", "github__get_issue", `{"repo":"acme/public"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.callAs("s1", "github__get_file_contents", `{"repo":"acme/secret-plans","path":"README.md"}`); err != nil {
		t.Fatal(err)
	}
	_, err := r.callAs("s1", "github__create_pull_request", prArgs)
	if fault.CodeOf(err) != fault.CodeFlowBlocked {
		t.Fatalf("pull request in the tainted session: %v, want flow_blocked", err)
	}
	for _, want := range []string{"github:get_issue", "github:get_file_contents"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	if got := r.prs(); got != "" {
		t.Errorf("the server opened a pull request: %q", got)
	}
	if g := r.lastGate(); g != host.GateFlowBlocked {
		t.Errorf("record's gate = %q, want %q", g, host.GateFlowBlocked)
	}
	// The labels are the session's: another one holds only what it read.
	if _, err := r.callAs("s2", "github__get_issue", `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.callAs("s2", "github__create_pull_request", `{"title":"t","body":"b"}`); err != nil {
		t.Errorf("a session without private data refused: %v", err)
	}
	r.h.Close() // flush the audit log
	rows := r.auditRows(t, 1)
	if rows[0].Code != string(fault.CodeFlowBlocked) || !strings.Contains(rows[0].Approval, "github:get_file_contents") {
		t.Errorf("audit row = %+v, want flow_blocked naming the calls", rows[0])
	}
}

// TestFlowGuardReportOnly: by default the rule only reports: the pull
// request goes through, its record says it would have been blocked.
func TestFlowGuardReportOnly(t *testing.T) {
	t.Parallel()
	r := openGate(t, nil, nil)
	for _, name := range []string{"github__get_issue", "github__get_file_contents"} {
		if _, err := r.callAs("s1", name, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.callAs("s1", "github__create_pull_request", prArgs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.prs(), "Update README") {
		t.Errorf("report-only mode stopped the call: %q", r.prs())
	}
	if g := r.lastGate(); g != host.GateWouldBlock {
		t.Errorf("record's gate = %q, want %q", g, host.GateWouldBlock)
	}
}

// TestHeldCallApproved: a call policy.approve names is held, bound to its
// arguments; a person's approval lets the same call through once, and the
// audit row says who approved it and when; a changed argument or a second
// use is held again.
func TestHeldCallApproved(t *testing.T) {
	t.Parallel()
	r := openGate(t, map[string]any{"approve": map[string]any{"tools": []string{"github:create_*"}}}, nil)
	_, err := r.callAs("s1", "github__create_pull_request", prArgs)
	if fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Fatalf("first call: %v, want approval_required", err)
	}
	held, err := r.h.HeldCalls(context.Background(), store.ApprovalPending)
	if err != nil || len(held) != 1 {
		t.Fatalf("held calls = %v, %v; want one", held, err)
	}
	if _, err2 := r.callAs("s1", "github__create_pull_request", prArgs); strings.Contains(errString(err2), held[0].ID) {
		t.Errorf("the model is told the held call's ID: %v", err2)
	}
	if again, _ := r.h.HeldCalls(context.Background(), store.ApprovalPending); len(again) != 1 {
		t.Errorf("the same call made again while held holds %d calls, want the one", len(again))
	}
	r.advance(time.Minute)
	if _, err := r.h.DecideCall(context.Background(), held[0].ID, true, "cli:alice"); err != nil {
		t.Fatal(err)
	}
	// Same values, other member order: the same call.
	if _, err := r.callAs("s1", "github__create_pull_request", `{"body":"`+testkit.PrivateFile+`","title":"Update README"}`); err != nil {
		t.Fatalf("approved call: %v", err)
	}
	if g := r.lastGate(); g != host.GateUsed {
		t.Errorf("record's gate = %q, want used", g)
	}
	if n := strings.Count(r.prs(), "pr "); n != 1 {
		t.Errorf("pull requests opened: %d, want 1", n)
	}
	if _, err := r.callAs("s1", "github__create_pull_request", prArgs); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Errorf("second use of one approval: %v, want approval_required", err)
	}
	if _, err := r.callAs("s1", "github__create_pull_request", `{"title":"Other","body":"x"}`); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Errorf("other arguments: %v, want approval_required", err)
	}
	if _, err := r.callAs("s9", "github__create_pull_request", prArgs); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Errorf("another flow: %v, want approval_required", err)
	}
	r.h.Close()
	var approved bool
	for _, row := range r.auditRows(t, 3) {
		if row.Tool == "github:create_pull_request" && row.Outcome == host.OutcomeOK &&
			strings.HasPrefix(row.Approval, "approved "+held[0].ID+" by cli:alice at 2026-12-05T01:01:00Z") {
			approved = true
		}
	}
	if !approved {
		t.Errorf("no audit row of the approved call saying who approved it and when: %+v", r.auditRows(t, 3))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestHeldCallDeniedAndExpired: a denial and a hold no one decided on in
// time end the call with their own codes.
func TestHeldCallDeniedAndExpired(t *testing.T) {
	t.Parallel()
	r := openGate(t, map[string]any{"approve": map[string]any{"tools": []string{"github:create_*"}, "expiryMs": 60000}}, nil)
	r.callAs("s1", "github__create_pull_request", prArgs)
	held, _ := r.h.HeldCalls(context.Background(), store.ApprovalPending)
	if len(held) != 1 {
		t.Fatalf("held = %v", held)
	}
	if _, err := r.h.DecideCall(context.Background(), held[0].ID, false, "ui:operator"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.callAs("s1", "github__create_pull_request", prArgs); fault.CodeOf(err) != fault.CodeApprovalDenied {
		t.Errorf("denied call: %v, want approval_denied", err)
	}
	if _, err := r.h.DecideCall(context.Background(), held[0].ID, true, "ui:operator"); err == nil {
		t.Error("a denied call approved afterwards")
	}

	r.callAs("s1", "github__create_pull_request", `{"title":"late"}`)
	r.advance(2 * time.Minute)
	if _, err := r.callAs("s1", "github__create_pull_request", `{"title":"late"}`); fault.CodeOf(err) != fault.CodeApprovalExpired {
		t.Errorf("expired hold: %v, want approval_expired", err)
	}
	if g := r.lastGate(); g != host.GateExpired {
		t.Errorf("record's gate = %q, want expired", g)
	}
	if _, err := r.callAs("s1", "github__create_pull_request", `{"title":"late"}`); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Errorf("after expiry the call is held afresh: %v", err)
	}
	if r.prs() != "" {
		t.Errorf("a held call ran: %q", r.prs())
	}
}

// TestHeldCallApprover: with an Approver (a terminal), the call waits for
// the decision it records and then runs, in one call.
func TestHeldCallApprover(t *testing.T) {
	t.Parallel()
	var r *gateRig
	r = openGate(t, map[string]any{"approve": map[string]any{"tools": []string{"github:create_*"}}},
		func(ctx context.Context, c host.HeldCall) error {
			_, err := r.h.DecideCall(ctx, c.ID, true, "terminal:alice")
			return err
		})
	if _, err := r.callAs("s1", "github__create_pull_request", prArgs); err != nil {
		t.Fatalf("call approved at the terminal: %v", err)
	}
	if !strings.Contains(r.prs(), "Update README") {
		t.Errorf("the approved call did not run")
	}
}

// TestHeldCallReportOnly: policy.approve's report mode records what it
// would hold and makes the call.
func TestHeldCallReportOnly(t *testing.T) {
	t.Parallel()
	r := openGate(t, map[string]any{"approve": map[string]any{"tools": []string{"github:create_*"}, "report": true}}, nil)
	if _, err := r.callAs("s1", "github__create_pull_request", prArgs); err != nil {
		t.Fatal(err)
	}
	if g := r.lastGate(); g != host.GateWouldHold {
		t.Errorf("record's gate = %q, want would_hold", g)
	}
}

// TestFlowGuardApprove: under "approve" the tainted flow's outward call is
// held, its detail naming the calls that tainted the flow.
func TestFlowGuardApprove(t *testing.T) {
	t.Parallel()
	r := openGate(t, map[string]any{"flow": map[string]any{"mode": "approve"}}, nil)
	r.callAs("s1", "github__get_issue", `{}`)
	r.callAs("s1", "github__get_file_contents", `{}`)
	if _, err := r.callAs("s1", "github__create_pull_request", prArgs); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Fatalf("tainted outward call: %v, want approval_required", err)
	}
	held, _ := r.h.HeldCalls(context.Background(), store.ApprovalPending)
	if len(held) != 1 || held[0].Reason != "flow" || !strings.Contains(held[0].Detail, "github:get_issue") {
		t.Errorf("held = %+v", held)
	}
}

// TestHeldCallAcrossReplicas: two hosts sharing one store (replicas) see
// the same held calls and the same flows: a call held on one is approved
// through the other and made on either, once; a flow tainted on one is
// refused on the other.
func TestHeldCallAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := openGate(t, map[string]any{"approve": map[string]any{"tools": []string{"github:create_*"}}, "flow": map[string]any{"mode": "refuse"}}, nil)
	b := openWith(t, a.cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, Clock: a.clock}, a.st))
	callB := func(session, name, args string) error {
		_, err := b.View(host.Caller{Client: "claude", Session: session}).Call(context.Background(), name, json.RawMessage(args), nil)
		return err
	}
	if _, err := a.callAs("s1", "github__create_pull_request", `{"title":"x"}`); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Fatalf("held on a: %v", err)
	}
	held, err := b.HeldCalls(context.Background(), store.ApprovalPending)
	if err != nil || len(held) != 1 {
		t.Fatalf("b's held calls = %v, %v", held, err)
	}
	if _, err := b.DecideCall(context.Background(), held[0].ID, true, "ui:operator"); err != nil {
		t.Fatal(err)
	}
	if err := callB("s1", "github__create_pull_request", `{"title":"x"}`); err != nil {
		t.Errorf("the approved call on b: %v", err)
	}
	if _, err := a.callAs("s1", "github__create_pull_request", `{"title":"x"}`); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Errorf("the same approval used again on a: %v", err)
	}

	a.callAs("s2", "github__get_issue", `{}`)
	if err := callB("s2", "github__get_file_contents", `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := a.callAs("s2", "github__create_pull_request", `{"title":"y"}`); fault.CodeOf(err) != fault.CodeFlowBlocked {
		t.Errorf("a flow tainted across replicas: %v, want flow_blocked", err)
	}
}

// TestFlowGuardResourceRead: a resource read through the built-in tool
// carries its server's labels into the flow as a tool's result does: the
// ticket read from a server that is not trusted is untrusted content.
func TestFlowGuardResourceRead(t *testing.T) {
	t.Parallel()
	db := child(t, testkit.ModeSecrets, nil)
	db["sandbox"] = testSandbox
	r := openGateWith(t, map[string]any{"db": db}, map[string]any{"flow": map[string]any{
		"mode": "refuse", "labels": map[string]any{"db:reveal": []string{"private"}}}}, nil)
	if _, err := r.callAs("s1", host.ReadResourceTool, `{"id":"test://ticket"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.callAs("s1", "db__reveal", `{}`); err != nil {
		t.Fatal(err)
	}
	_, err := r.callAs("s1", "github__create_pull_request", prArgs)
	if fault.CodeOf(err) != fault.CodeFlowBlocked || !strings.Contains(err.Error(), "db:resources/read") || !strings.Contains(err.Error(), "db:reveal") {
		t.Errorf("outward call after a resource read and a private read: %v, want flow_blocked naming both", err)
	}
}

// TestHeldCallConcurrent: the same call made at once by several callers
// of one flow waits on one hold.
func TestHeldCallConcurrent(t *testing.T) {
	t.Parallel()
	r := openGate(t, map[string]any{"approve": map[string]any{"tools": []string{"github:create_*"}}}, nil)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := r.callAs("s1", "github__create_pull_request", prArgs); fault.CodeOf(err) != fault.CodeApprovalRequired {
				t.Errorf("call: %v, want approval_required", err)
			}
		})
	}
	wg.Wait()
	if held, err := r.h.HeldCalls(context.Background(), store.ApprovalPending); err != nil || len(held) != 1 {
		t.Errorf("held = %d, %v; want one hold", len(held), err)
	}
}
