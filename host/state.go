package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/state"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// The state store as a program sees it through the Host: the definitions
// held back until approved, their approval, and the audit log.

// openStore returns the store the Host keeps its state in (see
// Options.StateDir, Ephemeral and Store), and whether the Host opened it.
func openStore(ctx context.Context, cfg *config.Config, opts *Options) (store.Store, bool, error) {
	switch {
	case opts.store != nil:
		return opts.store, false, nil
	case opts.Ephemeral:
		return nil, false, nil
	}
	dir := opts.StateDir
	if dir == "" && cfg.Store.Postgres == "" {
		home, err := config.Home(nil)
		if err != nil {
			return nil, false, fmt.Errorf("the state store: %w (set Options.StateDir, or Options.Ephemeral for none)", err)
		}
		dir = home
	}
	st, err := state.Open(ctx, cfg.Store.Postgres, dir)
	if err != nil {
		return nil, false, fmt.Errorf("the state store: %w", err)
	}
	return st, true, nil
}

// needsStore refuses a configuration whose safety settings a Host without
// a store cannot honour: a server under manual approval, whose
// definitions could never be approved.
func needsStore(cfg *config.Config) error {
	for _, sc := range cfg.Servers {
		if sc.Enabled && sc.Lifecycle.Approval == config.ApprovalManual {
			return fault.New(fault.CodeInvalidInput, sc.Name, "",
				errors.New(`"approval": "manual" needs a state store, and the host has none (Options.Ephemeral)`))
		}
	}
	return nil
}

// Held is a definition held back until it is approved ([Host.Approve]):
// a tool whose definition changed since it was approved (under "onDrift":
// "hold"), one first seen under "approval": "manual", one whose metadata
// matches an injection pattern, a server's changed instructions, or a
// server's launch. A held tool is not listed, and calls to it are refused
// with [fault.CodeDefinitionChanged] (or [fault.CodeHeldInjection]); a
// server whose launch is held is not started, and calls to its tools are
// refused with [fault.CodeLaunchChanged].
type Held struct {
	Server string `json:"server"`
	// Tool is the tool's name; "" for the server's instructions.
	Tool string `json:"tool"`
	// Injection: held because its metadata matches an injection pattern,
	// not because it changed.
	Injection bool `json:"injection,omitempty"`
	// Launch: the server's launch (Tool is ""), held because it differs
	// from the one approved or was never approved; the server is not
	// started until it is approved (docs/PINS.md).
	Launch bool `json:"launch,omitempty"`
	// Target names it for [Host.Approve]: "server:tool", or the server's
	// name for its instructions.
	Target string `json:"target"`
	// Label names it for people.
	Label string `json:"label"`
	// Diff is what changed since it was approved, line by line ("-" the
	// approved definition, "+" the new one), with control characters
	// escaped; the whole definition for one never approved.
	Diff string `json:"diff"`
}

// Held returns the held definitions of every server (target ""), of one
// server (its name), or of one tool ("server:tool"), with their diffs.
// A definition is written to the store as held just after it is first
// refused or seen, on a goroutine of the Host. An ephemeral Host holds
// nothing.
func (h *Host) Held(ctx context.Context, target string) ([]Held, error) {
	if h.store == nil {
		return nil, nil
	}
	list, err := state.List(ctx, h.store, target)
	out := make([]Held, 0, len(list))
	for _, d := range list {
		out = append(out, Held(d))
	}
	return out, err
}

// Approve approves the held definitions of target (a server's name, or
// "server:tool"): they are pinned in the state store, as `switchboard
// approve` pins them, and in force when Approve returns (the tool is
// listed and callable again). It returns the labels of what it approved;
// nothing held is an error with [fault.CodeNotFound].
func (h *Host) Approve(ctx context.Context, target string) ([]string, error) {
	if h.store == nil {
		return nil, fault.New(fault.CodeNotFound, "", "", errors.New("nothing is held: the host is ephemeral"))
	}
	approved, err := state.Approve(ctx, h.store, target)
	if len(approved) > 0 {
		h.approvalsChanged()
	}
	return approved, err
}

// AuditQuery selects rows of the audit log. A zero field does not filter.
type AuditQuery struct {
	Server string
	Tool   string // canonical ID, "server:tool"
	// Caller is the caller the call was made for ([CallOptions.Client]).
	Caller  string
	Outcome string    // "ok", "tool_error" or "error"
	Since   time.Time // calls at or after Since
	Limit   int       // at most this many rows; not positive means 100
	// Run selects a script's run (code mode): its own row and its calls'.
	Run string
}

// AuditEntry is a row of the audit log: one tool call, ended or refused.
type AuditEntry struct {
	ID     int64 // increases with every call recorded
	Time   time.Time
	Tool   string // canonical ID, "server:tool"
	Server string
	Caller string // "" when unknown
	// Profile is the configuration's profile the call was made through;
	// "" for the whole aggregate.
	Profile string
	// ArgShape lists the arguments' keys and types, never their values.
	ArgShape string
	Outcome  string     // "ok", "tool_error" or "error"
	Code     fault.Code // the error's code; "" when none
	Latency  time.Duration
	BytesIn  int
	BytesOut int
	// Run is the script run (code mode) the call belongs to, "" for a
	// direct call: the script's row and its calls' share it.
	Run string
}

// Audit returns rows of the audit log, newest first. A call's row is
// written shortly after it ends, on a goroutine of the Host, so that no
// call waits for the store. An ephemeral Host logs nothing.
func (h *Host) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	if h.store == nil {
		return nil, nil
	}
	calls, err := h.store.Calls(ctx, store.CallFilter{Server: q.Server, Tool: q.Tool, Caller: q.Caller, Outcome: q.Outcome, Since: q.Since, Limit: q.Limit, Run: q.Run})
	out := make([]AuditEntry, 0, len(calls))
	for _, c := range calls {
		out = append(out, AuditEntry{ID: c.ID, Time: c.Time, Tool: c.Tool, Server: c.Server, Caller: c.Caller, Profile: c.Profile,
			ArgShape: c.ArgShape, Outcome: c.Outcome, Code: fault.Code(c.Code), Latency: c.Latency, BytesIn: c.BytesIn, BytesOut: c.BytesOut, Run: c.Run})
	}
	return out, err
}
