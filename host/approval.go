package host

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/approval"
	"github.com/switchboard-mcp/switchboard/internal/policy"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Per-call approval (config: policy.approve) and the data-flow guard
// (policy.flow). A call that the rules name is held: a pending approval in
// the store, so that every process sharing it sees it, bound to the
// caller's identity, the flow, the tool and the hash of the arguments in
// canonical JSON (internal/approval). A person approves or denies it (the
// status page behind its login, `switchboard approve-call`, the terminal
// of a CLI `call`, or the client's URL elicitation that opens the status
// page); an approval serves that one call once, and both it and the hold
// expire. The model is told that the call is held, never how to release
// it. docs/APPROVALS.md has the rules and the incidents they answer.

// HeldCall is a tool call held for a person's approval.
type HeldCall struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"` // canonical ID
	Server string `json:"server"`
	// Caller is the caller's identity ("" for the operator), ClientName
	// the name the client gave itself, Profile the profile it called
	// through, Flow the flow the call belongs to.
	Caller     string `json:"caller,omitempty"`
	ClientName string `json:"clientName,omitempty"`
	Profile    string `json:"profile,omitempty"`
	Flow       string `json:"flow"`
	// Arguments are the call's arguments, for the person who decides.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason lists why it is held (approval.Reason*), Detail says it in
	// a sentence.
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	// State is store.ApprovalPending, ...Approved, ...Denied, ...Used or
	// ...Expired.
	State     string    `json:"state"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	DecidedBy string    `json:"decidedBy,omitempty"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
}

func heldOf(a *store.Approval) HeldCall {
	return HeldCall{ID: a.ID, Tool: a.Tool, Server: a.Server, Caller: a.Caller, ClientName: a.ClientName, Profile: a.Profile,
		Flow: a.Flow, Arguments: json.RawMessage(a.Args), Reason: a.Reason, Detail: a.Detail, State: a.State,
		Created: a.CreatedAt, Expires: a.ExpiresAt, DecidedBy: a.DecidedBy, DecidedAt: a.DecidedAt}
}

// An Approver puts a held call to a person while the call waits: it
// returns nil once the person has been asked (a terminal asked and its
// answer recorded with [Host.DecideCall], a client shown the status page's
// approval), and the call then waits for the decision in the store, until
// the hold expires or ctx ends. An error means no one could be asked: the
// call ends approval_required, the error wrapped (a client-facing
// JSON-RPC error in it, the URL elicitation a 2026-07-28 client must
// complete, reaches the client as it is).
type Approver func(ctx context.Context, c HeldCall) error

// Gate decisions, CallRecord.Gate: what per-call approval and the
// data-flow guard did with a call. A bounded set, fit for a metric label.
const (
	GateHeld        = "held"         // held for approval (approval_required)
	GateApproved    = "approved"     // a person approved a held call (the decision, not the call)
	GateDenied      = "denied"       // a person denied a held call (the decision, not the call)
	GateUsed        = "used"         // made on a person's approval
	GateRefused     = "refused"      // refused: a person denied it (approval_denied)
	GateExpired     = "expired"      // no decision, or an approval unused, in time
	GateFlowBlocked = "flow_blocked" // refused by the data-flow rule
	GateWouldHold   = "would_hold"   // report-only: policy.approve would hold it
	GateWouldBlock  = "would_block"  // report-only: the data-flow rule would hold or refuse it
)

// Who decides, as recorded in DecidedBy: a prefix naming where, then the
// person as that place knows them.
const (
	DeciderUI       = "ui"       // the status page
	DeciderCLI      = "cli"      // `switchboard approve-call` / `deny-call`
	DeciderTerminal = "terminal" // the terminal of a CLI `call`
	DeciderControl  = "api"      // the control API
)

// approvalPoll is how often a call waiting for a decision reads the store.
const approvalPoll = 200 * time.Millisecond

// flowTimeout bounds one read or write of a flow's marks.
const flowTimeout = 2 * time.Second

// gates are the compiled rules of policy.approve and policy.flow for one
// configuration; gatesFor caches the last.
type gates struct {
	cfg     *config.Config
	approve config.Approve
	flow    config.Flow
	rules   *approval.Rules
	labels  *approval.Labeler
	presets sync.Map // server name → its preset (presetOf), "" for none
}

// gatesCache holds the compiled gates of the configuration in force, and
// the flow marks this process has written, so that a flow's label from a
// tool is written to the store once, not at every call.
type gatesCache struct {
	p atomic.Pointer[gates]

	mu     sync.Mutex
	marked map[store.FlowMark]struct{} // Time zero; cleared past maxMarked
}

// maxMarked bounds the marks remembered as written; past it the memory is
// cleared (a mark written again is kept as it was).
const maxMarked = 10_000

// written reports whether m was written by this process already, and
// remembers it otherwise.
func (c *gatesCache) written(m store.FlowMark) bool {
	m.Time = time.Time{}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.marked[m]; ok {
		return true
	}
	if c.marked == nil || len(c.marked) >= maxMarked {
		c.marked = make(map[store.FlowMark]struct{})
	}
	c.marked[m] = struct{}{}
	return false
}

// forget drops ms from the marks remembered as written (their write
// failed).
func (c *gatesCache) forget(ms []store.FlowMark) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range ms {
		m.Time = time.Time{}
		delete(c.marked, m)
	}
}

// gatesFor returns the compiled gates of cfg (validated: its globs
// compile), compiling them once per configuration.
func (h *Host) gatesFor(cfg *config.Config) *gates {
	if g := h.callGates.p.Load(); g != nil && g.cfg == cfg {
		return g
	}
	p := cfg.Policy
	g := &gates{cfg: cfg, approve: p.Approve.WithDefaults(), flow: p.Flow.WithDefaults()}
	rc := approval.RulesConfig{Tools: g.approve.Tools, Destructive: g.approve.Destructive, OpenWorld: g.approve.OpenWorld, Unknown: g.approve.Unknown}
	for _, t := range g.approve.Trust {
		rc.Trust = append(rc.Trust, policy.Trust(t))
	}
	var err error
	if g.rules, err = approval.NewRules(rc); err != nil {
		h.log.Error("policy.approve not compiled; no call is held by its rules", "err", err)
		g.rules = nil
	}
	var lr []approval.LabelRule
	for _, l := range g.flow.Labels {
		lr = append(lr, approval.LabelRule{Pattern: l.Pattern, Labels: l.Labels})
	}
	if g.labels, err = approval.NewLabeler(lr, !g.flow.NoPresets); err != nil {
		h.log.Error("policy.flow.labels not compiled; labels come from presets and defaults", "err", err)
		g.labels, _ = approval.NewLabeler(nil, !g.flow.NoPresets)
	}
	h.callGates.p.Store(g)
	return g
}

// now is the Host's clock (Options.Clock).
func (h *Host) now() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return time.Now()
}

// flowOf is the flow a call belongs to: a legacy client's session (its ID
// hashed, never kept), else the caller's verified identity within its
// profile, else the operator's one flow. A 2026-07-28 client has no
// session, so its flow is its identity: every conversation of one caller
// shares the labels, which taints more, never less.
func flowOf(opts *CallOptions) string {
	switch {
	case opts == nil:
		return "operator"
	case opts.Session != "":
		sum := sha256.Sum256([]byte(opts.Session))
		return "session:" + hex.EncodeToString(sum[:16])
	case opts.Client != "":
		return "caller:" + opts.Client + "/" + opts.Profile
	case opts.Profile != "":
		return "operator/" + opts.Profile
	}
	return "operator"
}

// gateNote is what gate decided about a call, for its record.
type gateNote struct {
	decision string // a Gate* constant, "" for none
	note     string // the audit row's Approval
}

// labelsOf returns the data-flow labels of t on sc.
func (g *gates) labelsOf(t *registry.Tool, sc *config.Server) approval.Set {
	set, _ := g.labels.Labels(approval.Tool{ID: t.ID.String(), Name: t.ID.Name, Preset: g.presetOf(sc),
		Trust: policy.Trust(sc.Trust.Level()), Annotations: annotationsOf(t)})
	return set
}

// presetOf is presetOf(sc), worked out once per server of the
// configuration.
func (g *gates) presetOf(sc *config.Server) string {
	if p, ok := g.presets.Load(sc.Name); ok {
		return p.(string)
	}
	p := presetOf(sc)
	g.presets.Store(sc.Name, p)
	return p
}

// presetOf names the well-known server sc is, "" for none.
func presetOf(sc *config.Server) string {
	if sc.Transport == config.TransportStdio {
		return approval.PresetOf(sc.Name, append([]string{sc.Command}, sc.Args...)...)
	}
	return approval.PresetOf(sc.Name, sc.URL)
}

// annotationsOf is t's annotations as policy sees them; readOnlyHint
// false (go-sdk's zero) counts as not declared.
func annotationsOf(t *registry.Tool) *policy.Annotations {
	a := t.Tool.Annotations
	if a == nil {
		return nil
	}
	out := &policy.Annotations{Destructive: a.DestructiveHint, OpenWorld: a.OpenWorldHint}
	if a.ReadOnlyHint {
		ro := true
		out.ReadOnly = &ro
	}
	return out
}

// gated is gate for call0: opts, copied, carry the decision to the
// call's record.
func (h *Host) gated(ctx context.Context, t *registry.Tool, sc *config.Server, args json.RawMessage, opts *CallOptions) (*CallOptions, error) {
	n, err := h.gate(ctx, t, sc, args, opts)
	if n.decision == "" {
		return opts, err
	}
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	o.gate = n
	return &o, err
}

// gate applies policy.approve and the data-flow rule to a call that
// policy permitted: the call goes on (with what was decided, for its
// record), or the error says it is held, denied, expired or refused.
func (h *Host) gate(ctx context.Context, t *registry.Tool, sc *config.Server, args json.RawMessage, opts *CallOptions) (gateNote, error) {
	g := h.gatesFor(h.config())
	id := t.ID.String()
	op := func() string { return fmt.Sprintf("call tool %q", t.ID.Name) } // made only for an error
	reasons, detail := g.rules.Need(approval.Call{ID: id, Trust: policy.Trust(sc.Trust.Level()), Annotations: annotationsOf(t)})
	report := g.approve.Report
	var note gateNote
	if g.flow.Mode != config.FlowOff && h.store != nil {
		set := g.labelsOf(t, sc)
		taint := ""
		if set.Outward {
			taint = h.tainted(ctx, flowOf(opts), set)
		}
		if taint != "" {
			switch g.flow.Mode {
			case config.FlowReport:
				note = gateNote{GateWouldBlock, "would_block flow: " + taint}
				h.log.Warn("data-flow rule would hold or refuse a call (report only)", "server", sc.Name, "tool", id, "why", taint)
			case config.FlowRefuse:
				h.log.Warn("data-flow rule refused a call", "server", sc.Name, "tool", id, "why", taint)
				return gateNote{GateFlowBlocked, "flow: " + taint}, fault.New(fault.CodeFlowBlocked, sc.Name, op(),
					fmt.Errorf("refused by the data-flow rule (policy.flow): %s", taint))
			case config.FlowApprove:
				reasons = joinNonEmpty(",", reasons, approval.ReasonFlow)
				detail = joinNonEmpty("; ", detail, taint)
				report = false // the flow guard holds on its own mode
			}
		}
	}
	if reasons == "" {
		return note, nil
	}
	if report {
		h.log.Warn("call would be held for approval (report only)", "server", sc.Name, "tool", id, "why", detail)
		return gateNote{GateWouldHold, joinNonEmpty("; ", "would_hold ("+reasons+")", note.note)}, nil
	}
	if h.store == nil {
		return gateNote{GateHeld, "held (" + reasons + "): no store"}, fault.New(fault.CodeApprovalRequired, sc.Name, op(),
			fmt.Errorf("the call needs a person's approval (%s), and without a state store it cannot be held", detail))
	}
	return h.hold(ctx, g, t, sc, args, opts, flowOf(opts), reasons, detail)
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// hold finds or makes the approval of this exact call and acts on its
// state: an approval given is used (once), a denial or an expiry ends the
// call, a pending one is put to the Approver and waited for.
func (h *Host) hold(ctx context.Context, g *gates, t *registry.Tool, sc *config.Server, args json.RawMessage, opts *CallOptions, flow, reasons, detail string) (gateNote, error) {
	id := t.ID.String()
	op := fmt.Sprintf("call tool %q", t.ID.Name)
	hash, err := approval.ArgsHash(args)
	if err != nil {
		return gateNote{}, fault.New(fault.CodeInvalidInput, sc.Name, op, err)
	}
	var caller, clientName, profile string
	if opts != nil {
		caller, clientName, profile = opts.Client, opts.ClientName, opts.Profile
	}
	key := approval.Key(caller, flow, id, hash)
	sctx, cancel := context.WithTimeout(ctx, flowTimeout)
	list, err := h.store.Approvals(sctx, store.ApprovalFilter{Key: key, Limit: 1})
	cancel()
	if err != nil {
		h.storeReached(err)
		return gateNote{GateHeld, "held (" + reasons + "): store unreachable"}, fault.New(fault.CodeApprovalRequired, sc.Name, op,
			fmt.Errorf("the call needs a person's approval (%s), and the state store is unreachable", detail))
	}
	var a *store.Approval
	if len(list) > 0 {
		a = &list[0]
	}
	if a != nil {
		if n, err, done := h.settle(ctx, a, sc.Name, op); done {
			return n, err
		}
		if a.State != store.ApprovalPending {
			a = nil // used or expired: this call is held afresh
		}
	}
	if a == nil {
		now := h.now()
		a = &store.Approval{ID: newApprovalID(), Key: key, Tool: id, Server: sc.Name, Caller: caller, Flow: flow,
			ClientName: clientName, Profile: profile, ArgsHash: hash, Args: capArgs(args), Reason: reasons, Detail: detail,
			State: store.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(g.approve.Expiry)}
		made := a.ID
		sctx, cancel := context.WithTimeout(ctx, flowTimeout)
		err := h.store.SaveApproval(sctx, a)
		if errors.Is(err, store.ErrConflict) {
			// Another call (maybe in another process) held it first:
			// this one waits on that hold.
			var list []store.Approval
			if list, err = h.store.Approvals(sctx, store.ApprovalFilter{Key: key, State: store.ApprovalPending, Limit: 1}); err == nil && len(list) == 1 {
				a = &list[0]
			} else if err == nil {
				err = errors.New("the hold that came first is gone")
			}
		}
		cancel()
		if err != nil {
			h.storeReached(err)
			return gateNote{GateHeld, "held (" + reasons + "): store unreachable"}, fault.New(fault.CodeApprovalRequired, sc.Name, op,
				fmt.Errorf("the call needs a person's approval (%s), and the state store is unreachable", detail))
		}
		if a.ID == made {
			h.log.Warn("call held for a person's approval", "server", sc.Name, "tool", id, "approval", a.ID, "why", detail)
		}
	}
	held := gateNote{GateHeld, fmt.Sprintf("held %s (%s)", a.ID, reasons)}
	approver := h.approver
	if opts != nil && opts.Approve != nil {
		approver = opts.Approve
	}
	heldErr := func(cause error) error {
		msg := fmt.Sprintf("the call is held until a person approves it (%s); the hold expires at %s", detail, a.ExpiresAt.UTC().Format(time.RFC3339))
		if cause != nil {
			return fault.New(fault.CodeApprovalRequired, sc.Name, op, fmt.Errorf("%s: %w", msg, cause))
		}
		return fault.New(fault.CodeApprovalRequired, sc.Name, op, errors.New(msg))
	}
	if approver == nil {
		return held, heldErr(nil)
	}
	if err := approver(ctx, heldOf(a)); err != nil {
		return held, heldErr(err)
	}
	// Wait for the decision, read from the store so that one made by any
	// process counts.
	tick := time.NewTicker(approvalPoll)
	defer tick.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, flowTimeout)
		cur, err := h.store.Approval(sctx, a.ID)
		cancel()
		if err == nil {
			if n, err, done := h.settle(ctx, cur, sc.Name, op); done {
				return n, err
			}
		}
		select {
		case <-ctx.Done():
			return held, heldErr(ctx.Err())
		case <-tick.C:
		}
	}
}

// settle acts on a's state for the call it binds: done reports whether
// the call's fate is decided (made on an approval, or ended with err).
func (h *Host) settle(ctx context.Context, a *store.Approval, server, op string) (n gateNote, err error, done bool) {
	now := h.now()
	expired := !now.Before(a.ExpiresAt)
	switch {
	case a.State == store.ApprovalApproved && !expired:
		used, err := h.store.MoveApproval(ctx, a.ID, store.ApprovalApproved, store.ApprovalUsed, "", now)
		if err != nil {
			// Used by another call meanwhile: not this one's.
			return gateNote{}, nil, false
		}
		h.log.Info("held call approved", "server", server, "tool", a.Tool, "approval", a.ID, "by", used.DecidedBy)
		return gateNote{GateUsed, fmt.Sprintf("approved %s by %s at %s", a.ID, used.DecidedBy, used.DecidedAt.UTC().Format(time.RFC3339))}, nil, true
	case a.State == store.ApprovalDenied && !expired:
		return gateNote{GateRefused, fmt.Sprintf("denied %s by %s at %s", a.ID, a.DecidedBy, a.DecidedAt.UTC().Format(time.RFC3339))},
			fault.New(fault.CodeApprovalDenied, server, op, errors.New("a person denied this call")), true
	case (a.State == store.ApprovalPending || a.State == store.ApprovalApproved) && expired:
		if _, err := h.store.MoveApproval(ctx, a.ID, a.State, store.ApprovalExpired, "", now); err != nil && !errors.Is(err, store.ErrConflict) {
			h.log.Warn("held call's expiry not recorded", "approval", a.ID, "err", err)
		}
		what := "no one decided on the held call in time"
		if a.State == store.ApprovalApproved {
			what = "the approval was not used in time"
		}
		return gateNote{GateExpired, "expired " + a.ID},
			fault.New(fault.CodeApprovalExpired, server, op, errors.New(what+"; made again, the call is held afresh")), true
	}
	return gateNote{}, nil, false
}

// argsMax caps the arguments a held call keeps for the person deciding;
// the hash binds the whole.
const argsMax = 64 << 10

func capArgs(args json.RawMessage) []byte {
	if len(args) == 0 {
		return []byte("{}")
	}
	if len(args) > argsMax {
		return append(append([]byte{}, args[:argsMax]...), "…"...)
	}
	return args
}

// newApprovalID is a fresh, unguessable approval ID: 80 random bits in
// lower-case base32.
func newApprovalID() string {
	var b [10]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read does not fail
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// tainted returns the data-flow rule's sentence for an outward call in
// flow, or "". A store that cannot be read taints nothing, and says so in
// the log.
func (h *Host) tainted(ctx context.Context, flow string, set approval.Set) string {
	sctx, cancel := context.WithTimeout(ctx, flowTimeout)
	defer cancel()
	ms, err := h.store.FlowMarks(sctx, flow)
	if err != nil {
		h.storeReached(err)
		h.log.Warn("flow labels not read; the data-flow rule is not applied to this call", "err", err)
		return ""
	}
	marks := make([]approval.Mark, len(ms))
	for i, m := range ms {
		marks[i] = approval.Mark{Label: m.Label, Tool: m.Tool}
	}
	return approval.Tainted(marks, set)
}

// markFlow records in the store the labels that a result of t carried
// into the call's flow.
func (h *Host) markFlow(ctx context.Context, t *registry.Tool, sc *config.Server, opts *CallOptions) {
	if h.store == nil {
		return
	}
	g := h.gatesFor(h.config())
	if g.flow.Mode == config.FlowOff {
		return
	}
	h.mark(ctx, t.ID.String(), g.labelsOf(t, sc), opts)
}

// mark records in the store the labels of set that a result of tool (a
// canonical ID) carried into the call's flow.
func (h *Host) mark(ctx context.Context, tool string, set approval.Set, opts *CallOptions) {
	if !set.Private && !set.Untrusted {
		return
	}
	flow := flowOf(opts)
	var ms []store.FlowMark
	for _, l := range []string{approval.Private, approval.Untrusted} {
		m := store.FlowMark{Flow: flow, Label: l, Tool: tool, Time: h.now()}
		if set.Has(l) && !h.callGates.written(m) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flowTimeout)
	defer cancel()
	if err := h.store.MarkFlow(sctx, ms...); err != nil {
		h.callGates.forget(ms)
		h.storeReached(err)
		h.log.Warn("flow labels not recorded", "tool", tool, "err", err)
	}
}

// markRead records in the store the labels that a built-in tool's read
// of sc (method "resources/read" or "prompts/get") carried into the
// call's flow: a resource can bring in private data or untrusted content
// as a tool's result can.
func (h *Host) markRead(ctx context.Context, sc *config.Server, method string, opts *CallOptions) {
	if h.store == nil {
		return
	}
	g := h.gatesFor(h.config())
	if g.flow.Mode == config.FlowOff {
		return
	}
	id := sc.Name + ":" + method
	set, _ := g.labels.Labels(approval.Tool{ID: id, Name: method, Preset: g.presetOf(sc), Trust: policy.Trust(sc.Trust.Level()), Read: true})
	h.mark(ctx, id, set, opts)
}

// HeldCalls returns the held calls in state ("" for any), newest first.
func (h *Host) HeldCalls(ctx context.Context, state string) ([]HeldCall, error) {
	if h.store == nil {
		return nil, nil
	}
	return HeldCallsIn(ctx, h.store, state)
}

// HeldCallsIn returns the held calls of st in state ("" for any), newest
// first: for the CLI, which reads the store when no gateway serves it.
func HeldCallsIn(ctx context.Context, st store.Store, state string) ([]HeldCall, error) {
	list, err := st.Approvals(ctx, store.ApprovalFilter{State: state})
	if err != nil {
		return nil, err
	}
	out := make([]HeldCall, len(list))
	for i := range list {
		out[i] = heldOf(&list[i])
	}
	return out, nil
}

// DecideCall approves (or denies) the held call id as by ("ui:operator",
// "cli:alice", "terminal:alice"): the call waiting for it goes on (or
// ends approval_denied), or, made again, goes through once. A call that is
// not pending, or whose hold has expired, cannot be decided. The decision
// leaves an audit row.
func (h *Host) DecideCall(ctx context.Context, id string, approve bool, by string) (HeldCall, error) {
	if h.store == nil {
		return HeldCall{}, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no held call %q: there is no state store", id))
	}
	c, err := DecideCallIn(ctx, h.store, id, approve, by, h.now())
	if err == nil && h.onCall != nil {
		rec := CallRecord{Start: h.now(), Server: c.Server, Tool: c.Tool, Catalogued: true, Outcome: OutcomeGuard,
			Gate: decisionGate(approve)}
		h.observe(&rec)
	}
	return c, err
}

func decisionGate(approve bool) string {
	if approve {
		return GateApproved
	}
	return GateDenied
}

// DecideCallIn is DecideCall on a store, at now: for the CLI, which
// writes the store when no gateway serves it.
func DecideCallIn(ctx context.Context, st store.Store, id string, approve bool, by string, now time.Time) (HeldCall, error) {
	a, err := st.Approval(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return HeldCall{}, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no held call %q", id))
	}
	if err != nil {
		return HeldCall{}, err
	}
	if a.State != store.ApprovalPending {
		return heldOf(a), fault.New(fault.CodeInvalidInput, a.Server, "", fmt.Errorf("held call %s is %s, not pending", id, a.State))
	}
	if !now.Before(a.ExpiresAt) {
		st.MoveApproval(ctx, id, store.ApprovalPending, store.ApprovalExpired, "", now) //nolint:errcheck // best effort; the call's own check records it
		return heldOf(a), fault.New(fault.CodeApprovalExpired, a.Server, "", fmt.Errorf("held call %s expired at %s", id, a.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	to := store.ApprovalDenied
	if approve {
		to = store.ApprovalApproved
	}
	moved, err := st.MoveApproval(ctx, id, store.ApprovalPending, to, by, now)
	if errors.Is(err, store.ErrConflict) {
		return heldOf(a), fault.New(fault.CodeInvalidInput, a.Server, "", fmt.Errorf("held call %s was decided meanwhile", id))
	}
	if err != nil {
		return heldOf(a), err
	}
	verb := "denied"
	if approve {
		verb = "approved"
	}
	row := &store.Call{Time: now, Tool: a.Tool, Server: a.Server, Caller: a.Caller, ClientName: a.ClientName, Profile: a.Profile,
		Outcome: OutcomeGuard, Code: "call_" + verb, Approval: fmt.Sprintf("%s %s by %s at %s", verb, id, by, now.UTC().Format(time.RFC3339))}
	if err := st.RecordCalls(ctx, row); err != nil {
		return heldOf(moved), fmt.Errorf("the call is %s, but its audit row was not written: %w", verb, err)
	}
	return heldOf(moved), nil
}
