// Package control is what an operator does to a running gateway: the
// live host's servers (state, since when, process, calls in flight, token
// cost), restart, enable and disable, the held definitions with their
// diffs, approve and reject, the audit log's recent calls and the calls in
// flight. One layer of operations, served as JSON under APIPath (api.go)
// to the CLI (client.go) and used in-process by the status page
// (internal/ui).
//
// Enable, disable and reject change the configuration file, through the
// caller's Options.EditServer (the CLI's confedit path, then a reload):
// the file stays the truth. Approvals go through the store, as `switchboard
// approve` writes them, and the live host takes them at once.
package control

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/state"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Options configure New.
type Options struct {
	// Host is the live host. Required.
	Host *host.Host
	// Store is the host's state store. Nil: no audit log, nothing held.
	Store store.Store
	// EditServer changes the named server's object in the configuration
	// file with edit, and has the running configuration reloaded from it
	// before it returns. Nil: enable, disable and reject are refused.
	EditServer func(ctx context.Context, server string, edit func(ServerEdit) error) error
	// Source returns the configuration in use, for people. Nil: "".
	Source func() string
	// Changed, when set, is called after an approval or a restart has
	// changed the host's aggregate, before the operation returns: the
	// gateway brings its served lists in line (Gateway.Sync), which the
	// host's OnChange would do a moment later. Nil: nothing.
	Changed func()
}

// ServerEdit is a server's object in the configuration file, as
// EditServer hands it over.
type ServerEdit interface {
	// SetEnabled turns the server on or off.
	SetEnabled(on bool) error
	// DisableTool adds tool to the server's "disabledTools".
	DisableTool(tool string) error
}

// Control is the operations on one live host. It keeps no state of its
// own: every answer is read from the host and the store when asked.
type Control struct {
	opts Options
}

// New returns the operations on opts.Host.
func New(opts Options) *Control {
	return &Control{opts: opts}
}

// Host returns the live host.
func (c *Control) Host() *host.Host { return c.opts.Host }

// Server is a server's status with what the gateway knows besides.
type Server struct {
	host.ServerStatus
	// InFlight is the number of its tool calls in progress.
	InFlight int `json:"inFlight"`
	// TokenCost is what its tools' definitions cost in a model's context
	// (an estimate), and ListedCost what of that the model is given
	// (deferred tools left out).
	TokenCost  int `json:"tokenCost"`
	ListedCost int `json:"listedCost"`
}

// Status is the gateway's servers and its totals.
type Status struct {
	Servers []Server `json:"servers"`
	// Tools is the number of the servers' tools, Builtin of the built-in
	// tools the model is given.
	Tools   int    `json:"tools"`
	Builtin int    `json:"builtin"`
	Config  string `json:"config,omitempty"`
}

// Status returns the live host's servers, sorted by name.
func (c *Control) Status() Status {
	h := c.opts.Host
	statuses := h.Servers()
	inflight := hostlink.Of(h).CallsInFlight()
	cost, listed := map[string]int{}, map[string]int{}
	tools := h.Tools()
	for _, t := range tools {
		cost[t.Server] += t.Tokens()
	}
	builtin := 0
	for _, t := range h.View(host.Caller{}).Tools() {
		listed[t.Server] += t.Tokens()
		if t.Server == "" {
			builtin++
		}
	}
	st := Status{Servers: make([]Server, 0, len(statuses)), Tools: len(tools), Builtin: builtin}
	for _, s := range statuses {
		st.Servers = append(st.Servers, Server{ServerStatus: s, InFlight: inflight[s.Name], TokenCost: cost[s.Name], ListedCost: listed[s.Name]})
	}
	if c.opts.Source != nil {
		st.Config = c.opts.Source()
	}
	return st
}

// known returns a not_found error unless name is a configured server.
func (c *Control) known(name string) error {
	for _, s := range c.opts.Host.Servers() {
		if s.Name == name {
			return nil
		}
	}
	return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", name))
}

// Restart stops the server and starts it again (host.Restart).
func (c *Control) Restart(ctx context.Context, name string) error {
	err := c.opts.Host.Restart(ctx, name)
	c.changed()
	return err
}

func (c *Control) changed() {
	if c.opts.Changed != nil {
		c.opts.Changed()
	}
}

// SetEnabled turns a server on or off in the configuration file; the
// reload starts or stops it.
func (c *Control) SetEnabled(ctx context.Context, name string, on bool) error {
	if err := c.known(name); err != nil {
		return err
	}
	if c.opts.EditServer == nil {
		return errNoEdits
	}
	return c.opts.EditServer(ctx, name, func(e ServerEdit) error { return e.SetEnabled(on) })
}

var errNoEdits = fault.New(fault.CodeUnavailable, "", "", errors.New("this gateway does not edit its configuration"))

// Held is a definition held back until it is approved.
type Held = state.Held

// Held returns the held definitions of a server, of one tool
// ("server:tool"), or of every server (target "").
func (c *Control) Held(ctx context.Context, target string) ([]Held, error) {
	if c.opts.Store == nil {
		return nil, nil
	}
	return Diffs(ctx, c.opts.Store, target)
}

// Diffs reads the held definitions of target ("" for all, a server, or
// "server:tool") from st, with their diffs against what was approved, as
// `switchboard diff` shows them.
func Diffs(ctx context.Context, st store.Store, target string) ([]Held, error) {
	return state.List(ctx, st, target)
}

// Approve pins the held definitions of target (a server, or
// "server:tool") and has the live host take them at once. It returns the
// labels of what it approved; nothing held is a not_found error.
func (c *Control) Approve(ctx context.Context, target string) ([]string, error) {
	if c.opts.Store == nil {
		return nil, fault.New(fault.CodeNotFound, "", "", errors.New("nothing is held: the gateway has no state store"))
	}
	approved, err := Approve(ctx, c.opts.Store, target)
	if len(approved) > 0 {
		hostlink.Of(c.opts.Host).ApprovalsChanged()
		c.changed()
	}
	return approved, err
}

// Approve pins the held definitions of target (a server, or
// "server:tool") in st: what `switchboard approve` does. It returns the
// labels of what it approved; nothing held is a not_found error.
func Approve(ctx context.Context, st store.Store, target string) ([]string, error) {
	approved, err := state.Approve(ctx, st, target)
	if fe, ok := errors.AsType[*fault.Error](err); ok && fe.Code == fault.CodeNotFound && fe.Err != nil {
		err = fault.New(fault.CodeNotFound, "", "", fmt.Errorf("%w (switchboard servers -v lists held tools)", fe.Err))
	}
	return approved, err
}

// Reject turns a held tool off: it is added to its server's
// "disabledTools" in the configuration file (the reload takes it out of
// the catalogue), and its held definition is forgotten.
func (c *Control) Reject(ctx context.Context, target string) error {
	server, tool, one := Cut(target)
	if !one || tool == "" {
		return fault.New(fault.CodeInvalidInput, "", "", fmt.Errorf("reject names one tool (server:tool), not %q", target))
	}
	held, err := c.Held(ctx, target)
	if err != nil {
		return err
	}
	if len(held) == 0 {
		return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("nothing to reject for %s: no held definition", target))
	}
	if c.opts.EditServer == nil {
		return errNoEdits
	}
	if err := c.opts.EditServer(ctx, server, func(e ServerEdit) error { return e.DisableTool(tool) }); err != nil {
		return err
	}
	for _, key := range []string{tool, hostlink.InjectionApprovalKey(tool)} {
		if err := c.opts.Store.DeleteDrift(ctx, server, key); err != nil {
			return err
		}
	}
	return nil
}

// Calls returns recent calls from the audit log, newest first.
func (c *Control) Calls(ctx context.Context, f store.CallFilter) ([]store.Call, error) {
	if c.opts.Store == nil {
		return nil, nil
	}
	return c.opts.Store.Calls(ctx, f)
}

// Live returns the tool calls in flight, oldest first.
func (c *Control) Live() []hostlink.LiveCall { return hostlink.Of(c.opts.Host).LiveCalls() }

// Findings returns what vetting found in the servers' metadata.
func (c *Control) Findings() []host.Finding { return c.opts.Host.Findings() }

// Cut splits "server:tool" (at the last colon); one is false for a bare
// server name.
func Cut(target string) (server, tool string, one bool) { return state.Cut(target) }
