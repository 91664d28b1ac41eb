package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"modernc.org/quickjs"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// Limits bound one run. A zero field means its default.
type Limits struct {
	// Memory caps the engine's heap, in bytes (default 32 MiB): the
	// script's values and the tool results handed to it.
	Memory int64
	// CPU caps the time spent running JavaScript (default 2 s); the time
	// tool calls take is not counted.
	CPU time.Duration
	// Wall caps the whole run, tool calls included (default 60 s).
	Wall time.Duration
	// Calls caps the tool calls one run makes (default 100).
	Calls int
	// Source caps the script's text, in bytes (default 32 KiB).
	Source int
	// Output caps the returned value, as JSON, in bytes (default 64 KiB);
	// also the arguments of one tool call.
	Output int
	// Parallel is how many of a run's tool calls may be in flight at once
	// (default 4).
	Parallel int
}

// Defaults.
const (
	DefaultMemory   = 32 << 20
	DefaultCPU      = 2 * time.Second
	DefaultWall     = 60 * time.Second
	DefaultCalls    = 100
	DefaultSource   = 32 << 10
	DefaultOutput   = 64 << 10
	DefaultParallel = 4
)

// WithDefaults returns l with each zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.CPU <= 0 {
		l.CPU = DefaultCPU
	}
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	if l.Calls <= 0 {
		l.Calls = DefaultCalls
	}
	if l.Source <= 0 {
		l.Source = DefaultSource
	}
	if l.Output <= 0 {
		l.Output = DefaultOutput
	}
	if l.Parallel <= 0 {
		l.Parallel = DefaultParallel
	}
	return l
}

// Tool is one tool a script may call: Server.Name(args) in the script,
// Call (the view's name for it) passed to the Caller.
type Tool struct {
	Server string // the server's name; its namespace in the script
	Name   string // the tool's name on its server
	Call   string // the name the Caller is given
}

// Caller makes one tool call for a script. It returns the value the
// script receives, as JSON, or an error. An error that is a *ToolError is
// thrown in the script as a ToolError it may catch; any other error stops
// the script, and Run returns it (a policy refusal, a call that needs a
// person's approval: decisions about the caller, not failures of a tool).
type Caller func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)

// ToolError is a tool call that failed in a way a script may handle: the
// tool answered with isError, or the call was not valid. Code is the
// fault code, "" for a tool's own error.
type ToolError struct {
	Tool, Code, Message string
}

func (e *ToolError) Error() string { return e.Message }

// ScriptError is a script that failed on its own: it threw (a syntax
// error included) or awaited something that never settles. Like a tool's
// own failure, it is an answer the model can act on, not a fault.
type ScriptError struct {
	Reason  string // ReasonScript or ReasonStalled
	Message string // the exception, with its stack
}

func (e *ScriptError) Error() string { return e.Reason + ": " + e.Message }

// Call is one tool call a run made, in the order the script made them.
type Call struct {
	Tool string
	Err  error // nil when the call succeeded
}

// Result is what a run returned.
type Result struct {
	// Value is the script's return value as JSON (null for none).
	Value json.RawMessage
	// Calls are the tool calls made, in order.
	Calls []Call
	// CPU is the time spent running JavaScript.
	CPU time.Duration
}

// Reasons, the first word of a run's error: which limit stopped it, or
// why it failed.
const (
	ReasonCPU     = "cpu_limit"
	ReasonWall    = "wall_limit"
	ReasonMemory  = "memory_limit"
	ReasonStack   = "stack_limit"
	ReasonCalls   = "call_limit"
	ReasonOutput  = "output_limit"
	ReasonSource  = "source_limit"
	ReasonScript  = "script_error"
	ReasonStalled = "stalled"
	ReasonStopped = "stopped"
)

// Sandbox runs scripts, a bounded number at a time.
type Sandbox struct {
	lim   Limits
	slots chan struct{}
}

// New returns a sandbox with limits l (zero fields default) that runs at
// most concurrent scripts at once (0 means 4); more wait.
func New(l Limits, concurrent int) *Sandbox {
	if concurrent <= 0 {
		concurrent = 4
	}
	return &Sandbox{lim: l.WithDefaults(), slots: make(chan struct{}, concurrent)}
}

// Limits returns the sandbox's limits.
func (s *Sandbox) Limits() Limits { return s.lim }

// limitErr is a run stopped by a limit or a failure, as a fault.
func limitErr(code fault.Code, reason, format string, args ...any) error {
	return fault.New(code, "", "run script", fmt.Errorf(reason+": "+format, args...))
}

// Run runs src, the body of an async function, with tools in reach, each
// call made through call. A script's return value (JSON-serialisable) is
// the result. Run returns a *fault.Error when a limit stopped the script
// (timeout for CPU and wall time, too_large for the rest), a *ScriptError
// when the script threw or stalled, and the Caller's own error when that
// stopped it.
func (s *Sandbox) Run(ctx context.Context, src string, tools []Tool, call Caller) (*Result, error) {
	lim := s.lim
	if len(src) > lim.Source {
		return nil, limitErr(fault.CodeTooLarge, ReasonSource, "the script is %d bytes, over the limit of %d", len(src), lim.Source)
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Wall)
	defer cancel()
	r := &run{lim: lim, ctx: ctx, call: call, cpuLeft: lim.CPU}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		// Waiting for a free sandbox counts in the wall time.
		return nil, r.ended()
	}
	return r.run(src, tools)
}

// interruptEvery is how often a run whose context has ended is
// interrupted again until it is over.
const interruptEvery = 10 * time.Millisecond

// run is one run's state. Everything but the pending calls' goroutines
// runs on the goroutine that called Run, the VM's.
type run struct {
	lim  Limits
	ctx  context.Context
	call Caller
	vm   *quickjs.VM

	cpuLeft time.Duration
	calls   []Call
	pending []*pendingCall
	stop    error // set when a call or a limit stops the script

	settled bool
	value   string // the return value as JSON, when settled without failure
	failure string // the exception, when settled with one
}

// pendingCall is a tool call the script awaits.
type pendingCall struct {
	tool string
	args json.RawMessage
	pc   *quickjs.PromiseCapability
	out  json.RawMessage
	err  error
}

func (r *run) run(src string, tools []Tool) (res *Result, err error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fault.New(fault.CodeUnavailable, "", "run script", err)
	}
	r.vm = vm
	defer vm.Close()
	vm.SetMemoryLimit(uintptr(r.lim.Memory))
	// The engine drops an interrupt that comes before a call from Go
	// enters JavaScript, so once the context ends the VM is interrupted
	// again and again until the run is over; vmMu keeps that off a
	// closed VM.
	var vmMu sync.Mutex
	over := make(chan struct{})
	defer func() {
		vmMu.Lock()
		close(over)
		vmMu.Unlock()
	}()
	stopWatch := context.AfterFunc(r.ctx, func() {
		t := time.NewTicker(interruptEvery)
		defer t.Stop()
		for {
			vmMu.Lock()
			select {
			case <-over:
				vmMu.Unlock()
				return
			default:
			}
			vm.Interrupt()
			vmMu.Unlock()
			select {
			case <-over:
				return
			case <-t.C:
			}
		}
	})
	defer stopWatch()
	defer func() {
		// The VM's pending calls hold promise capabilities: free them
		// before the VM closes.
		for _, p := range r.pending {
			p.pc.Resolve.Free()
			p.pc.Reject.Free()
		}
	}()

	if err := vm.RegisterFunc("__sb_call", r.hostCall, false); err != nil {
		return nil, fault.New(fault.CodeUnavailable, "", "run script", err)
	}
	ns, err := namespaces(tools)
	if err != nil {
		return nil, err
	}
	var post quickjs.Value
	if err := r.js(func() error {
		post, err = vm.EvalValue(prelude(ns), quickjs.EvalGlobal)
		return err
	}); err != nil {
		return nil, r.failed(err)
	}
	defer post.Free()

	var promise quickjs.Value
	if err := r.js(func() error {
		promise, err = vm.EvalValue("(async () => {\n"+src+"\n})()", quickjs.EvalGlobal)
		return err
	}); err != nil {
		return nil, r.failed(err)
	}
	defer promise.Free()
	var then quickjs.Value
	if err := r.js(func() error {
		then, err = promise.Then(func(v quickjs.Value) {
			r.settled = true
			out, err := post.Call(quickjs.UndefinedValue, "s", v)
			if err != nil {
				r.postFailed(err)
				return
			}
			r.value, _ = out.(string)
		}, func(v quickjs.Value) {
			r.settled = true
			out, err := post.Call(quickjs.UndefinedValue, "d", v)
			if err != nil {
				r.postFailed(err)
				return
			}
			r.failure, _ = out.(string)
			if r.failure == "" {
				r.failure = "the script threw a value that is not an error"
			}
		})
		return err
	}); err != nil {
		return nil, r.failed(err)
	}
	defer then.Free()

	for {
		if err := r.js(func() error { _, err := vm.ExecutePendingJobs(); return err }); err != nil {
			return nil, r.failed(err)
		}
		if r.stop != nil {
			return nil, r.stop
		}
		if r.settled {
			break
		}
		if len(r.pending) == 0 {
			return nil, &ScriptError{Reason: ReasonStalled, Message: "the script awaits something that never settles (only tool calls and promises settle here: there are no timers)"}
		}
		if err := r.callPending(); err != nil {
			return nil, err
		}
	}
	res = &Result{Calls: r.calls, CPU: r.lim.CPU - r.cpuLeft}
	if r.failure != "" {
		return res, r.failed(errors.New(r.failure))
	}
	if len(r.value) > r.lim.Output {
		return res, limitErr(fault.CodeTooLarge, ReasonOutput, "the script returned %d bytes of JSON, over the limit of %d: return less, a summary or the part that is needed", len(r.value), r.lim.Output)
	}
	if r.value == "" {
		r.value = "null"
	}
	res.Value = json.RawMessage(r.value)
	return res, nil
}

// postFailed records that serialising the result or describing the
// exception failed: a limit stopped it (a toJSON or toString that loops),
// or it threw.
func (r *run) postFailed(err error) {
	r.failure = err.Error()
	if msg := r.failure; strings.Contains(msg, "interrupted") || strings.Contains(msg, "out of memory") || strings.Contains(msg, "stack overflow") {
		r.stop = r.failed(err)
	}
}

// js runs f, which enters JavaScript, within what is left of the CPU
// budget, and charges the time it took.
func (r *run) js(f func() error) error {
	if err := r.ended(); err != nil {
		return err
	}
	if r.cpuLeft <= 0 {
		return limitErr(fault.CodeTimeout, ReasonCPU, "the script ran JavaScript for over %s", r.lim.CPU)
	}
	if err := r.vm.SetEvalTimeout(r.cpuLeft); err != nil {
		return err
	}
	start := time.Now()
	err := f()
	r.cpuLeft -= time.Since(start)
	return err
}

// failed turns an error from the engine into the run's error: what
// stopped it if something did, else the limit or the exception.
func (r *run) failed(err error) error {
	var fe *fault.Error
	switch msg := err.Error(); {
	case r.stop != nil:
		return r.stop
	case errors.As(err, &fe):
		return err
	case strings.Contains(msg, "interrupted"):
		if err := r.ended(); err != nil {
			return err
		}
		return limitErr(fault.CodeTimeout, ReasonCPU, "the script ran JavaScript for over %s", r.lim.CPU)
	case strings.Contains(msg, "out of memory"), strings.Contains(msg, "string too long"), strings.Contains(msg, "OOM"):
		return limitErr(fault.CodeTooLarge, ReasonMemory, "the script used over %s of memory (%s)", bytesize.Format(r.lim.Memory), firstLine(msg))
	case strings.Contains(msg, "stack overflow"):
		return limitErr(fault.CodeTooLarge, ReasonStack, "the script recursed too deep (%s)", firstLine(msg))
	}
	return &ScriptError{Reason: ReasonScript, Message: capText(err.Error(), 2048)}
}

// ended returns why the run's context ended, nil while it has not: the
// wall limit, or the caller's cancellation.
func (r *run) ended() error {
	switch err := r.ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return limitErr(fault.CodeTimeout, ReasonWall, "the script ran for over %s, tool calls included", r.lim.Wall)
	default:
		return fault.New(fault.CodeTimeout, "", "run script", fmt.Errorf("%s: the call was cancelled: %w", ReasonStopped, err))
	}
}

// hostCall is __sb_call(tool, argsJSON): it queues the call and returns
// the promise the script awaits. A call over the limit stops the script.
func (r *run) hostCall(tool, args string) quickjs.Value {
	pc, err := r.vm.NewPromiseCapability()
	if err != nil {
		// Out of memory: a panic would go on through the engine into the
		// host, so the script is stopped instead.
		r.stopWith(limitErr(fault.CodeTooLarge, ReasonMemory, "the script used over %s of memory (%v)", bytesize.Format(r.lim.Memory), err))
		return quickjs.UndefinedValue
	}
	switch {
	case len(r.calls)+len(r.pending) >= r.lim.Calls:
		r.stopWith(limitErr(fault.CodeTooLarge, ReasonCalls, "the script made over %d tool calls", r.lim.Calls))
	case len(args) > r.lim.Output:
		r.stopWith(limitErr(fault.CodeTooLarge, ReasonOutput, "the arguments of a call of %s are %d bytes, over the limit of %d", tool, len(args), r.lim.Output))
	default:
		r.pending = append(r.pending, &pendingCall{tool: tool, args: json.RawMessage(args), pc: pc})
		return pc.Promise
	}
	pc.Resolve.Free()
	pc.Reject.Free()
	return pc.Promise
}

// stopWith stops the script at the next instruction: an interrupt cannot
// be caught.
func (r *run) stopWith(err error) {
	if r.stop == nil {
		r.stop = err
	}
	r.vm.Interrupt()
}

// callPending makes the calls the script awaits, at most lim.Parallel at
// once, and settles their promises in the order they were made.
func (r *run) callPending() error {
	batch := r.pending
	r.pending = nil
	sem := make(chan struct{}, r.lim.Parallel)
	var wg sync.WaitGroup
	for _, p := range batch {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p.out, p.err = r.call(r.ctx, p.tool, p.args)
		})
	}
	wg.Wait()
	stop := r.ended()
	for _, p := range batch {
		r.calls = append(r.calls, Call{Tool: p.tool, Err: p.err})
		var te *ToolError
		switch {
		case stop != nil:
			// Settled with nothing: the script stops before it runs again.
		case p.err == nil:
			if err := r.js(func() error { _, err := p.pc.Resolve.Call(quickjs.UndefinedValue, string(p.out)); return err }); err != nil {
				stop = r.failed(err)
			}
		case errors.As(p.err, &te):
			b, _ := json.Marshal(map[string]string{"tool": te.Tool, "code": te.Code, "message": te.Message})
			if err := r.js(func() error { _, err := p.pc.Reject.Call(quickjs.UndefinedValue, string(b)); return err }); err != nil {
				stop = r.failed(err)
			}
		default:
			stop = p.err
		}
		p.pc.Resolve.Free()
		p.pc.Reject.Free()
	}
	if stop != nil {
		r.stopWith(stop)
		return r.stop
	}
	return nil
}

// ident is what a name may be in the script as a plain property.
var ident = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// reserved are the words a JavaScript identifier cannot be.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`await break case catch class const continue debugger default delete do else enum
		export extends false finally for function if implements import in instanceof interface let new null package
		private protected public return static super switch this throw true try typeof var void while with yield`) {
		reserved[w] = true
	}
}

// Ident returns name as a JavaScript identifier: characters outside
// [A-Za-z0-9_$] become _, a leading digit gets a _ before it, and a
// reserved word a _ after it.
func Ident(name string) string {
	if reserved[name] {
		return name + "_"
	}
	if ident.MatchString(name) {
		return name
	}
	var b strings.Builder
	for i, c := range name {
		switch {
		case c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case c >= '0' && c <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
		default:
			c = '_'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// namespaces maps each server's identifier to its tools' identifiers and
// call names, as JSON.
func namespaces(tools []Tool) (string, error) {
	ns := map[string]map[string]string{}
	for _, t := range tools {
		s := Ident(t.Server)
		if ns[s] == nil {
			ns[s] = map[string]string{}
		}
		ns[s][t.Name] = t.Call
		if id := Ident(t.Name); id != t.Name {
			ns[s][id] = t.Call
		}
	}
	b, err := json.Marshal(ns)
	return string(b), err
}

// prelude sets up the script's globals: a frozen namespace per server,
// ToolError, and a Date without a clock. Its value is the function the
// host serialises the result and describes an exception with; the script
// cannot reach it.
func prelude(ns string) string {
	return `(() => {
"use strict";
const g = globalThis;
const call = g.__sb_call;
delete g.__sb_call;
const stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, String_ = String;
const RealDate = Date;
const noClock = () => { throw new TypeError("a script has no clock: pass the time in as data"); };
function SafeDate(...a) {
  if (!new.target || a.length === 0) noClock();
  return Reflect.construct(RealDate, a, new.target);
}
SafeDate.prototype = RealDate.prototype;
Object.defineProperty(RealDate.prototype, "constructor", {value: SafeDate});
SafeDate.UTC = RealDate.UTC; SafeDate.parse = RealDate.parse; SafeDate.now = noClock;
g.Date = SafeDate;
class ToolError extends Error {
  constructor(message, code, tool) { super(message); this.name = "ToolError"; this.code = code; this.tool = tool; }
}
Object.defineProperty(g, "ToolError", {value: ToolError});
const invoke = async (name, a) => {
  let r;
  try { r = await call(name, stringify(a === undefined ? {} : a)); }
  catch (e) { if (typeof e !== "string") throw e; const d = parse(e); throw new ToolError(d.message, d.code, d.tool); }
  return parse(r);
};
const ns = ` + ns + `;
for (const s of Object.keys(ns)) {
  const o = {};
  for (const t of Object.keys(ns[s])) { const name = ns[s][t]; o[t] = (a) => invoke(name, a); }
  // A server named as a global that cannot be replaced (undefined,
  // ToolError) is left out.
  try { Object.defineProperty(g, s, {value: freeze(o), enumerable: true}); } catch {}
}
return (kind, v) => {
  if (kind === "s") { const s = stringify(v); return s === undefined ? "null" : s; }
  if (v instanceof Error) return String_(v.name) + ": " + String_(v.message) + (v.stack ? "\n" + String_(v.stack) : "");
  try { return String_(v); } catch { return "an exception that cannot be shown"; }
};
})()`
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// capText cuts s to at most n bytes.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// servers returns the servers of tools, sorted.
func servers(tools []Tool) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tools {
		if !seen[t.Server] {
			seen[t.Server] = true
			out = append(out, t.Server)
		}
	}
	sort.Strings(out)
	return out
}
