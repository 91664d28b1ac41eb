package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/policy"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/resultguard"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Confirmation is a call that policy says a person must confirm
// (config: policy.confirm).
type Confirmation struct {
	Tool      string          `json:"tool"` // model-facing name
	ID        string          `json:"id"`   // canonical ID
	Server    string          `json:"server"`
	Title     string          `json:"title,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason says why confirmation is needed, for the person.
	Reason string `json:"reason"`
}

// Confirmer asks a person to confirm a call. It returns false (and a nil
// error) when the person declines; an error means no one could be asked.
type Confirmer func(ctx context.Context, c Confirmation) (bool, error)

// newPolicy compiles the configuration's policy. With a store, the quota
// is counted in it (quotaCounter), so that every process sharing the store
// shares the quota.
func newPolicy(p config.Policy, st store.Store, log *slog.Logger) (*policy.Engine, error) {
	p = p.WithDefaults()
	pc := policy.Config{
		Default: policy.Action(p.Default),
		Confirm: policy.Confirm(p.Confirm),
		Quota:   policy.Quota{Calls: p.Quota.Calls, Per: p.Quota.Per},
	}
	if st != nil {
		pc.Counter = quotaCounter{st: st, log: log}
	}
	for _, r := range p.Rules {
		pc.Rules = append(pc.Rules, policy.Rule{Action: policy.Action(r.Action), Pattern: r.Pattern, Clients: r.Clients, Profiles: r.Profiles})
	}
	return policy.New(pc)
}

// quotaTimeout bounds one quota count in the store; past it the policy
// counts the call in memory.
const quotaTimeout = 2 * time.Second

// quotaCounter counts quota windows in the store (a policy.Counter). An
// error is logged and returned, and the policy counts in memory instead.
type quotaCounter struct {
	st  store.Store
	log *slog.Logger
}

func (c quotaCounter) Take(key string, q policy.Quota, now time.Time) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), quotaTimeout)
	defer cancel()
	ok, retry, err := c.st.TakeQuota(ctx, key, store.Quota{Calls: q.Calls, Per: q.Per}, now)
	if err != nil {
		c.log.Warn("quota not counted in the store; counting in memory", "client", key, "err", err)
	}
	return ok, retry, err
}

// authorize applies the policy pol to a call before it is sent: a refusal is a
// policy_blocked error (rate_limited for a spent quota), a call that needs
// confirmation is put to the call's Confirmer, or the host's.
func (h *Host) authorize(ctx context.Context, pol *policy.Engine, t *registry.Tool, sc *config.Server, args json.RawMessage, opts *CallOptions) error {
	return h.authorizeAs(ctx, pol, t, sc, args, opts, false)
}

// authorizeAs is authorize; counted says the call was already counted
// against the quota (a second decision for it, after its definition
// changed), so that it is not counted twice.
func (h *Host) authorizeAs(ctx context.Context, pol *policy.Engine, t *registry.Tool, sc *config.Server, args json.RawMessage, opts *CallOptions, counted bool) error {
	id := t.ID.String()
	req := policy.Request{ID: id, Trust: policy.Trust(sc.Trust.Level()), Counted: counted}
	if a := t.Tool.Annotations; a != nil {
		ro, idem := a.ReadOnlyHint, a.IdempotentHint
		req.Annotations = &policy.Annotations{ReadOnly: &ro, Destructive: a.DestructiveHint, Idempotent: &idem, OpenWorld: a.OpenWorldHint}
	}
	if opts != nil {
		req.Client, req.Caller, req.Profile = opts.quotaKey(), opts.Caller, opts.Profile
	}
	c := Confirmation{Tool: t.Name, ID: id, Server: t.ID.Server, Title: t.Tool.Title, Arguments: args}
	return h.enforce(ctx, pol, req, c, func() string { return fmt.Sprintf("call tool %q", t.ID.Name) }, opts)
}

// authorizeRead applies the policy to a built-in tool's request to a
// server (method "resources/read" or "prompts/get"): it is decided as a
// call of the tool "<server>:<method>", so that rules over a server's IDs
// ("gh:*") cover it, and counted against the quota. The method is a read by
// the protocol's definition, not by the server's say-so, so it is judged
// read-only whatever the server's trust.
func (h *Host) authorizeRead(ctx context.Context, sc *config.Server, method string, args json.RawMessage, opts *CallOptions) error {
	ro, destructive := true, false
	req := policy.Request{ID: sc.Name + ":" + method, Trust: policy.Trusted,
		Annotations: &policy.Annotations{ReadOnly: &ro, Destructive: &destructive}}
	if opts != nil {
		req.Client, req.Caller, req.Profile = opts.quotaKey(), opts.Caller, opts.Profile
	}
	c := Confirmation{Tool: method, ID: req.ID, Server: sc.Name, Arguments: args}
	return h.enforce(ctx, h.comp.Load().pol, req, c, func() string { return method }, opts)
}

// enforce acts on the policy's decision for req: a refusal is a
// policy_blocked error (rate_limited for a spent quota), a call that needs
// confirmation is put to the call's Confirmer, or the host's. op names
// the operation in an error; it is made only when there is one, so that
// a permitted call costs no formatting.
func (h *Host) enforce(ctx context.Context, pol *policy.Engine, req policy.Request, c Confirmation, op func() string, opts *CallOptions) error {
	server := c.Server
	d := pol.Decide(req)
	switch d.Verdict {
	case policy.Permit:
		return nil
	case policy.Refuse:
		code := fault.CodePolicyBlocked
		if d.Reason == policy.ReasonQuota {
			code = fault.CodeRateLimited
		}
		return fault.New(code, server, op(), errors.New(d.Detail))
	}
	confirm := h.confirm
	if opts != nil && opts.Confirm != nil {
		confirm = opts.Confirm
	}
	if confirm == nil {
		return fault.New(fault.CodePolicyBlocked, server, op(),
			fmt.Errorf("the call needs a person's confirmation (%s; policy.confirm) and there is no one to ask", d.Detail))
	}
	c.Reason = d.Detail
	ok, err := confirm(ctx, c)
	switch {
	case err != nil:
		return fault.New(fault.CodePolicyBlocked, server, op(), fmt.Errorf("confirmation failed: %w", err))
	case !ok:
		return fault.New(fault.CodePolicyBlocked, server, op(), errors.New("the call was not confirmed"))
	}
	return nil
}

// guardResult bounds a result from a server before anyone sees it: text
// size, blocks, structured depth, images checked from their headers
// (internal/resultguard). What changed is logged. textBytes, when not 0,
// replaces the configured cap on a text block.
func (h *Host) guardResult(sc *config.Server, tool string, raw json.RawMessage, textBytes int) (json.RawMessage, error) {
	out, findings, err := h.guard(sc, tool, raw, textBytes, nil)
	h.logFindings(sc, tool, findings)
	return out, err
}

// guard is guardResult without the log; total, when not nil, receives the
// size of the result's text (see resultguard.Options.TextTotal).
func (h *Host) guard(sc *config.Server, tool string, raw json.RawMessage, textBytes int, total *int) (json.RawMessage, []resultguard.Finding, error) {
	sec := h.config().Security.WithDefaults()
	if textBytes == 0 {
		textBytes = sec.ResultTextMaxBytes
	}
	l := resultguard.Limits{
		TextBytes:       textBytes,
		Blocks:          sec.ResultMaxBlocks,
		StructuredDepth: sec.StructuredMaxDepth,
		Images:          sc.Images,
		ImageBytes:      sec.ImageMaxBytes,
		ImageSide:       sec.ImageMaxSide,
		ImagePixels:     sec.ImageMaxPixels,
		ImagesPerResult: sec.ImagesPerResult,
	}
	o := resultguard.Options{Server: sc.Name, Wrap: sec.WrapUntrustedResults && sc.Trust.Level() != config.TrustTrusted, TextTotal: total}
	out, findings, err := resultguard.Result(raw, l, o)
	if err != nil {
		return nil, nil, fault.New(fault.CodeServerError, sc.Name, fmt.Sprintf("call tool %q", tool), err)
	}
	return out, findings, nil
}

func (h *Host) logFindings(sc *config.Server, tool string, findings []resultguard.Finding) {
	for _, f := range findings {
		h.log.Warn("tool result: "+f.Kind, "server", sc.Name, "tool", tool, "block", f.Block, "detail", f.Detail)
	}
}

// cleanPrompt strips invisible and control characters from a rendered
// prompt's texts, which go straight into a model's context.
func cleanPrompt(res *mcp.GetPromptResult) {
	if res == nil {
		return
	}
	res.Description = cleanText(res.Description)
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			tc.Text = cleanText(tc.Text)
		}
	}
}

// quotaKey is the key of the caller's call quota: its Client, else its
// Session.
func (o *CallOptions) quotaKey() string {
	if o.Client != "" {
		return o.Client
	}
	return o.Session
}
