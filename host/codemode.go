package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/codemode"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/tokens"
)

// Code mode: the built-in code_run runs a model's short JavaScript program
// that calls the tools of its caller's view as async functions grouped by
// server, in internal/codemode's sandbox, and answers with the value it
// returns (context.codeMode; off by default; docs/CODEMODE.md).
//
// Each inner call is a call of the caller's view (View.Call), with the
// script's call options: the profile, policy, confirmation, pins and
// holds, quotas, result guard and audit log decide it as they decide a
// direct call. Each gets its own audit row, tied to the script's row by
// the run's ID (store.Call.Run). A call the policy refuses, or that needs
// a person's confirmation no one gave, stops the script with that call's
// error, naming it and the calls made before it (which ran, and stay
// done); a tool's own failure is thrown in the script as a ToolError it may
// catch.
//
// A script may call every tool of its view, deferred ones included, as a
// direct call may by exact name. code_run's description declares them
// (TypeScript-style, from their schemas), listed tools first, up to
// maxDeclTokens; the rest are callable by the names tool_search gives.

// CodeTool is the built-in tool that runs a script.
const CodeTool = "code_run"

// maxDeclTokens bounds the declarations in code_run's description.
const maxDeclTokens = 8000

var codeBuiltin = &builtin{
	tool: Tool{Name: CodeTool, ID: CodeTool, Title: "Run a script that calls tools",
		InputSchema: obj([]string{"script"}, `"script":{"type":"string","description":"The body of an async JavaScript function: await the tools, return the answer."}`)},
	run: (*View).runCode,
}

func init() {
	// Its calls may change anything the view's tools can.
	codeBuiltin.tool.Annotations = &mcp.ToolAnnotations{Title: codeBuiltin.tool.Title, OpenWorldHint: new(true)}
	builtins = append(builtins, codeBuiltin)
}

// codeState is the Host's code mode: the sandbox for the limits in force
// and the declarations cached per view.
type codeState struct {
	mu    sync.Mutex
	lim   codemode.Limits // sb's, as configured
	conc  int             // sb's concurrent runs, as configured
	sb    *codemode.Sandbox
	decls map[budgetKey]codeDecls // by profile and client
}

// codeDecls are a caller's declarations for one snapshot and
// configuration.
type codeDecls struct {
	snap *registry.Snapshot
	cfg  *config.Config
	text string
}

// sandbox returns the sandbox for cm, made anew when the limits changed.
func (c *codeState) sandbox(cm config.CodeMode) *codemode.Sandbox {
	lim := codemode.Limits{
		Memory: int64(cm.MemoryMB) << 20,
		CPU:    msDuration(cm.CPUMs),
		Wall:   msDuration(cm.WallMs),
		Calls:  cm.Calls,
		Output: cm.OutputBytes,
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sb == nil || c.lim != lim || c.conc != cm.Concurrent {
		c.lim, c.conc = lim, cm.Concurrent
		c.sb = codemode.New(lim, cm.Concurrent)
	}
	return c.sb
}

// codeOn reports whether code_run is on.
func (h *Host) codeOn() bool { return h.config().Context.CodeMode.Enabled }

// codeDescription is code_run's description in a view: how to write a
// script, and the declarations of the tools it may call.
func (h *Host) codeDescription(v *View) string {
	return "Run a short JavaScript program (the body of an async function) that calls tools and returns one value, " +
		"instead of calling them one by one: only the returned value comes back. Call a tool as `await server.tool({...})`; " +
		"it resolves to the tool's structured result, else its text, and throws a ToolError (message, code) when it fails. " +
		"No network, files, timers or clock; limits on time, memory and calls.\n" + h.declarations(v)
}

// declarations returns the view's tools as declarations, cached until the
// aggregate or the configuration changes.
func (h *Host) declarations(v *View) string {
	snap, cfg := h.snapshot(), h.config()
	c := &h.code
	c.mu.Lock()
	key := budgetKey{v.c.Profile, v.c.Client}
	d, ok := c.decls[key]
	c.mu.Unlock()
	if ok && d.snap == snap && d.cfg == cfg {
		return d.text
	}
	text := h.writeDeclarations(v, snap, cfg)
	c.mu.Lock()
	if c.decls == nil {
		c.decls = map[budgetKey]codeDecls{}
	}
	c.decls[key] = codeDecls{snap: snap, cfg: cfg, text: text}
	c.mu.Unlock()
	return text
}

// writeDeclarations writes the declarations of the view's tools: listed
// ones first, then deferred ones, within maxDeclTokens, or within the
// caller's tool budget where its model's context window is known.
func (h *Host) writeDeclarations(v *View, snap *registry.Snapshot, cfg *config.Config) string {
	sc := v.scope()
	var listed, deferred []codemode.Decl
	over := h.overBudget(v, cfg, snap)
	h.mu.RLock()
	found := h.found[v.c.Profile]
	for _, t := range snap.Tools() {
		if !sc.hasTool(t) {
			continue
		}
		d := codemode.Decl{Tool: codeToolOf(t), Description: t.Tool.Description,
			Input: schemaJSON(t.Tool.InputSchema), Output: schemaJSON(t.Tool.OutputSchema)}
		if h.deferredLocked(cfg, t, found, over) {
			deferred = append(deferred, d)
		} else {
			listed = append(listed, d)
		}
	}
	h.mu.RUnlock()
	all := append(listed, deferred...)
	text := codemode.Declarations(all)
	n, budget := len(all), maxDeclTokens
	if w := v.contextWindow(cfg); w > 0 {
		budget = min(budget, cfg.Context.ToolBudget(w))
	}
	for n > 0 && tokens.Estimate([]byte(text)) > budget {
		n = n * 3 / 4
		text = codemode.Declarations(all[:n])
	}
	if rest := len(all) - n; rest > 0 {
		text += fmt.Sprintf("// %d more tools are callable the same way: find them with %s.\n", rest, ToolSearch)
	}
	return text
}

// msDuration is a count of milliseconds as a duration.
func msDuration(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

func codeToolOf(t *registry.Tool) codemode.Tool {
	return codemode.Tool{Server: t.ID.Server, Name: t.ID.Name, Call: t.Name}
}

// runCode is code_run: the script run in the sandbox, each of its calls a
// call of the view.
func (v *View) runCode(ctx context.Context, args json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	var a struct {
		Script string `json:"script"`
	}
	if err := decodeArgs(CodeTool, args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Script) == "" {
		return nil, fault.New(fault.CodeInvalidInput, "", CodeTool, errors.New(`"script" is empty: write the body of an async function that returns the answer`))
	}
	return v.runScript(ctx, a.Script, opts)
}

// runScript runs src in the sandbox, each of its calls a call of the view,
// and answers with what it returned.
func (v *View) runScript(ctx context.Context, src string, opts *CallOptions) (json.RawMessage, error) {
	h := v.h
	v.awaitStarting(ctx)
	snap, sc := h.snapshot(), v.scope()
	var tools []codemode.Tool
	for _, t := range snap.Tools() {
		if sc.hasTool(t) {
			tools = append(tools, codeToolOf(t))
		}
	}
	tools = append(tools, v.heldTools()...)
	inner := innerOptions(opts)
	var mu sync.Mutex
	var made []string
	call := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		res, err := v.Call(ctx, tool, args, inner)
		mu.Lock()
		before := append([]string(nil), made...)
		made = append(made, tool)
		mu.Unlock()
		if err != nil {
			return nil, innerError(tool, before, err)
		}
		if res.IsError {
			return nil, &codemode.ToolError{Tool: tool, Message: capString(res.Text, 4096)}
		}
		return resultValue(res), nil
	}
	res, err := h.code.sandbox(h.config().Context.CodeMode).Run(ctx, src, tools, call)
	var se *codemode.ScriptError
	if errors.As(err, &se) {
		// The script's own failure: an answer the model can act on, as a
		// tool's is.
		return json.Marshal(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
			"text": "The script failed (" + se.Reason + "): " + se.Message}}})
	}
	if err != nil {
		return nil, err
	}
	text := string(res.Value)
	var s string
	if json.Unmarshal(res.Value, &s) == nil {
		text = s
	}
	return textResult(text)
}

// heldTools are the view's tools held for review, which are in no
// snapshot: a script may call them as a direct call may, and the call is
// refused with the hold (their definitions, which may be the poison, are
// never declared).
func (v *View) heldTools() []codemode.Tool {
	comp, sc := v.h.comp.Load(), v.scope()
	var out []codemode.Tool
	for _, c := range comp.cfg.Servers {
		s := comp.servers[c.Name]
		if s == nil || !sc.hasServer(c.Name) {
			continue
		}
		sv := s.view()
		for _, tool := range slices.Concat(sv.held, sv.injHeld) {
			id := names.ID{Server: c.Name, Name: tool}
			if tool != "" && sc.hasToolID(id) {
				out = append(out, codemode.Tool{Server: c.Name, Name: tool, Call: names.ModelName(names.Prefix(c.Prefix), tool)})
			}
		}
	}
	return out
}

// awaitStarting waits for the view's servers that are still starting
// (their tools not known yet), each bounded by ctx and its start-up
// timeout, so that a script finds their tools as a direct call of one
// would. A server that fails to start is left out.
func (v *View) awaitStarting(ctx context.Context) {
	var wg sync.WaitGroup
	comp := v.h.comp.Load()
	for _, name := range v.servers() {
		if s := comp.servers[name]; s != nil && s.currentState() == StateStarting {
			wg.Go(func() { _ = v.h.await(ctx, name) })
		}
	}
	wg.Wait()
}

// innerOptions are the options of a script's inner calls: the script's
// caller, confirmer and peer, without what belongs to the script's own
// request (its progress, a retry's input responses). A result is kept
// whole rather than spilled: the script reads it, not a model (text
// blocks are still capped, and the sandbox bounds memory).
func innerOptions(opts *CallOptions) *CallOptions {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	o.Progress, o.InputResponses, o.RequestState = nil, nil, ""
	o.RawOnly, o.KeepWhole = false, true
	return &o
}

// innerError is the error a script's call failed with, as the script
// sees it: a ToolError it may catch, or, for a decision about the caller
// (policy, confirmation, quota, a held definition or launch, a login),
// the error that stops the script, naming the call and those made
// before it. A call held for a person's approval is such a decision: once
// the person approved it, the same script run again makes it, once.
func innerError(tool string, before []string, err error) error {
	switch c := fault.CodeOf(err); c {
	case fault.CodePolicyBlocked, fault.CodeRateLimited, fault.CodeDefinitionChanged,
		fault.CodeHeldInjection, fault.CodeLaunchChanged, fault.CodeNeedsLogin,
		fault.CodeApprovalRequired, fault.CodeApprovalDenied, fault.CodeApprovalExpired, fault.CodeFlowBlocked:
		var fe *fault.Error
		server := ""
		if errors.As(err, &fe) {
			server = fe.Server
		}
		done := "no call before it ran"
		if len(before) > 0 {
			done = fmt.Sprintf("the %d calls before it ran and stay done (%s)", len(before), strings.Join(before, ", "))
		}
		// Wrapped, so that what the call's error carries for the client
		// (a URL where a person approves the held call) reaches it.
		return fault.New(c, server, CodeTool, privateAs(err, fmt.Errorf("the script stopped at call %d, %s: %w; %s; "+
			"a script run again makes its calls again", len(before)+1, tool, err, done)))
	default:
		return &codemode.ToolError{Tool: tool, Code: string(c), Message: capString(err.Error(), 4096)}
	}
}

// resultValue is a tool result as a script receives it: its structured
// content when it has some, else its text as a JSON string.
func resultValue(res *Result) json.RawMessage {
	if sc := structured(res.Raw); sc != nil {
		return sc
	}
	b, _ := json.Marshal(res.Text)
	return b
}

// isErrorResult reports whether a result says isError: true (a built-in's
// answer that is a failure, as code_run's for a script that threw).
func isErrorResult(raw json.RawMessage) bool {
	is := false
	_, _ = jsonscan.Object(raw, jsonscan.SkipSpace(raw, 0), func(m jsonscan.Member) (int, error) {
		end, _, err := jsonscan.Skip(raw, m.Value, 1)
		if err == nil && string(m.Key) == "isError" {
			is = string(raw[m.Value:end]) == "true"
		}
		return end, err
	})
	return is
}

// structured returns a result's structuredContent, nil when it has none.
func structured(raw json.RawMessage) json.RawMessage {
	var out json.RawMessage
	_, _ = jsonscan.Object(raw, jsonscan.SkipSpace(raw, 0), func(m jsonscan.Member) (int, error) {
		end, _, err := jsonscan.Skip(raw, m.Value, 1)
		if err == nil && string(m.Key) == "structuredContent" && raw[m.Value] == '{' {
			out = raw[m.Value:end]
		}
		return end, err
	})
	return out
}

func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// runKey carries a script run's ID in the context of its calls.
type runKey struct{}

// withRun returns ctx with a new run ID, which the script's audit row and
// those of its calls carry.
func withRun(ctx context.Context) context.Context {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return context.WithValue(ctx, runKey{}, hex.EncodeToString(b[:]))
}

// runOf returns the run ID in ctx, "" for a call made directly.
func runOf(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}
