// Package host connects to many MCP servers at once and puts everything
// they offer under one namespace, for Go programs that drive AI agents.
//
// Open a Host from a configuration, list what it offers, call tools:
//
//	cfg, err := config.Load(path, nil) // or config.Default(exe) for the demo server
//	if err != nil { ... }
//	h, err := host.Open(ctx, cfg, nil)
//	if err != nil { ... }
//	defer h.Close()
//
//	for _, s := range h.Servers() {
//		fmt.Println(s.Name, s.State, s.LastError) // a server that failed does not stop the others
//	}
//	for _, t := range h.Tools() {
//		fmt.Println(t.Name, t.Description) // t.Name is the model-facing name, e.g. "demo__echo"
//	}
//	res, err := h.Call(ctx, "demo__echo", json.RawMessage(`{"text":"hi"}`), nil)
//	switch {
//	case errors.Is(err, host.ErrTimeout): // the server did not answer in time
//	case err != nil: // unavailable, not found, protocol, invalid params: see package fault
//	case res.IsError: // the tool ran and failed: res.Text says why; this is data, not a Go error
//	default:
//		fmt.Println(res.Text)
//	}
//
// # Names
//
// Every tool has a canonical ID, "<server>:<tool>", and a model-facing name
// that matches ^[a-zA-Z0-9_-]{1,64}$: "<prefix>__<tool>" where that is
// valid, else a sanitised form with a hash suffix (see the README). Call,
// Tool and the other lookups accept either. Resources and prompts are named
// by canonical ID, "<server>:<uri>" and "<server>:<prompt>". Server names
// may contain colons: the longest configured server name wins.
//
// # Errors
//
// Transport and protocol failures are *fault.Error values; test them with
// errors.Is against ErrTimeout, ErrUnavailable, ErrProtocol, ErrNotFound,
// ErrInvalidParams and ErrUnknownOutcome, or read fault.CodeOf(err). A tool
// that returns isError is a successful Call whose Result has IsError set.
//
// A Host is safe for concurrent use. Close stops every server process.
//
// This package is the one that wires config, the launcher, upstream
// connections and the registry together; nothing under internal/ imports it.
package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/content"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/policy"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/search"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Sentinels for errors.Is; see package fault.
var (
	ErrTimeout        = fault.Timeout
	ErrUnavailable    = fault.Unavailable
	ErrProtocol       = fault.ServerError
	ErrNotFound       = fault.NotFound
	ErrInvalidParams  = fault.InvalidInput
	ErrUnknownOutcome = fault.UnknownOutcome
)

// Options configure Open. Nil means defaults.
type Options struct {
	// Logger receives warnings (a server that failed to start, name
	// collisions) and debug events. Nil discards them.
	Logger *slog.Logger
	// ClientName and ClientVersion identify Switchboard to servers.
	// Defaults: "switchboard", "dev".
	ClientName, ClientVersion string
	// ProbeTimeout bounds the 2026-07-28 server/discover probe of a stdio
	// server whose era is not pinned; without an answer by then, the same
	// process is asked for the legacy initialize handshake. Zero means 5 s
	// (at most half the server's startupTimeoutMs).
	ProbeTimeout time.Duration
	// StopTimeout bounds each stage of stopping a stdio server (close
	// stdin, SIGTERM, SIGKILL). Zero means 5 s.
	StopTimeout time.Duration
	// MaxFrame caps one message from a server (stdout line, HTTP body or
	// SSE event). Zero means 16 MiB.
	MaxFrame int
	// OnResourceUpdated, when set, receives update notifications for
	// subscribed resources (see Subscribe), with the server's name.
	OnResourceUpdated func(server, uri string)
	// OnChange, when set, is called (on its own goroutine, one call at a
	// time) after the aggregate changed because a server's lists changed:
	// Tools, Prompts, Resources and Templates then return the new lists.
	OnChange func()
	// Forward declares sampling, elicitation and roots to servers and routes
	// their requests to the Peer of the call that caused them
	// (CallOptions.Peer). Without it, servers are told Switchboard offers
	// none of them. The gateway sets it.
	Forward bool
	// Confirm asks a person to confirm the calls that the configuration's
	// policy.confirm selects (CallOptions.Confirm overrides it per call).
	// Nil refuses them with policy_blocked.
	Confirm Confirmer
	// StartupWait bounds how long Open waits for the servers it dials (the
	// enabled servers without a saved catalogue): a server still starting
	// when it has passed goes on starting in the background, shows as
	// "starting", and joins the aggregate when it is ready (OnChange is
	// called); a call to one of its tools waits for it. Zero waits until
	// every server is ready or has failed, each bounded by its
	// startupTimeoutMs; negative does not wait at all (the gateway).
	StartupWait time.Duration
	// Store keeps saved catalogues (a server whose configuration is
	// unchanged is advertised at once, without being started), approved
	// tool definitions (a changed definition is held back until
	// approved), the audit log, trust scores, the quota's counts
	// (policy.quota holds across every process sharing the store, and
	// across reloads) and the tool vectors of the semantic search tier. Nil keeps nothing: every server is discovered at
	// start, nothing is pinned or logged, and the quota is counted in
	// memory. A store shared by several processes (one with a change
	// feed, store.Notifier) brings their approvals here at once; while it
	// is unreachable the Host serves from memory (see Ready, StoreUp and
	// AuditStats).
	Store store.Store
	// PinsRecheck is how often the pins of servers with held tools are
	// re-read from the store: the fallback of a store's change feed, and
	// what picks up an approval made elsewhere when the store has none.
	// Zero means 1 s.
	PinsRecheck time.Duration
	// OnCall, when set, receives a record of every tool call, once it has
	// ended or been refused (see CallRecord), on the caller's goroutine:
	// it must not block. The gateway's metrics and its log line read it.
	OnCall func(CallRecord)
	// OnEvent, when set, receives the changes in servers' lives (exits,
	// restarts, backoffs, re-discoveries: see ServerEvent), on the
	// goroutine that saw them: it must not block.
	OnEvent func(ServerEvent)
	// OAuth, when set, logs in to Streamable HTTP servers that ask for
	// OAuth 2.1 (see OAuthOptions). Nil sends them only their configured
	// headers.
	OAuth *OAuthOptions
	// TracerProvider, when set, traces each Call as a span (see trace.go)
	// and each request to a server as its child, with the trace context
	// passed to the server in _meta (and in the headers of an HTTP
	// request). Nil traces nothing, at no cost.
	TracerProvider trace.TracerProvider
}

// State is a server's connection state.
type State string

// The states.
const (
	StateReady    State = "ready"    // connected and discovered
	StateIdle     State = "idle"     // advertised from its saved catalogue (or stopped when idle); starts on first use
	StateStarting State = "starting" // connecting
	StateDegraded State = "degraded" // its connection ended; the next call reconnects
	StateBackoff  State = "backoff"  // a start-up attempt failed; the next is scheduled
	StateFailed   State = "failed"   // could not connect or discover; see LastError. Probed again on activity
	StateDisabled State = "disabled" // "enabled": false in the configuration
	StateClosed   State = "closed"   // Close was called

	// StateMisconfigured: the configuration references an environment
	// variable that is not set (config.Server.Unusable, in LastError); the
	// server is never started.
	StateMisconfigured State = "misconfigured"
)

// ServerStatus describes one configured server.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Trust     string `json:"trust"`
	State     State  `json:"state"`
	// Since is when State was entered.
	Since time.Time `json:"since"`
	// PID is the process ID of a running stdio server; 0 otherwise.
	PID             int                 `json:"pid,omitempty"`
	ProtocolVersion string              `json:"protocolVersion,omitempty"`
	ServerInfo      *mcp.Implementation `json:"serverInfo,omitempty"`
	// Instructions are the server's instructions, cleaned and capped.
	Instructions string `json:"instructions,omitempty"`
	Tools        int    `json:"tools"`
	Resources    int    `json:"resources"`
	Templates    int    `json:"templates"`
	Prompts      int    `json:"prompts"`
	LastError    string `json:"lastError,omitempty"`
	// Auth is the state of the server's OAuth login, when it asked for
	// one: "ok", "expires in 3m", "needs login (run: switchboard login
	// NAME)". Never a token.
	Auth string `json:"auth,omitempty"`
	// Stderr is the escaped tail of a stdio server's stderr (last 64 KiB).
	Stderr string `json:"stderr,omitempty"`
	// Findings are what Switchboard changed, refused or noticed in the
	// server's metadata (see Findings).
	Findings []Finding `json:"findings,omitempty"`
	// TrustScore runs from 0 to 1 (0.5 is neutral) from the server's
	// outcomes: successes raise it, failures and flagged metadata lower
	// it; a score above neutral decays back towards it.
	TrustScore float64 `json:"trustScore"`
	// Held lists tools held back because their definition changed since
	// it was approved ("" is the server's instructions).
	Held []string `json:"held,omitempty"`
	// HeldInjection lists tools held back because their metadata matches
	// an injection pattern (security.onInjection), until approved.
	HeldInjection []string `json:"heldInjection,omitempty"`
}

// Tool describes one tool.
type Tool struct {
	Name         string               `json:"name"` // model-facing
	ID           string               `json:"id"`   // canonical "<server>:<tool>"
	Server       string               `json:"server"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// Deferred is set (by Tools) on a tool that ModelTools leaves out until
	// a tool_search finds it (config: context.deferTools).
	Deferred bool `json:"deferred,omitempty"`
}

// Resource describes one resource; ID is "<server>:<uri>".
type Resource struct {
	ID          string `json:"id"`
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// Template describes one resource template; ID is "<server>:<template>".
// Read a matching resource as "<server>:<filled-in URI>".
type Template struct {
	ID          string `json:"id"`
	Server      string `json:"server"`
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// Prompt describes one prompt; ID is "<server>:<prompt>", ModelName its
// model-facing name (built like a tool's).
type Prompt struct {
	ID          string                `json:"id"`
	ModelName   string                `json:"modelName"`
	Server      string                `json:"server"`
	Name        string                `json:"name"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	Arguments   []*mcp.PromptArgument `json:"arguments,omitempty"`
}

// CallOptions tune one call. Nil means defaults.
type CallOptions struct {
	// Progress, when set, receives the call's progress notifications, in
	// order, on a goroutine of the connection: it must not block.
	Progress func(Progress)
	// Peer, when set, answers the server's requests during the call. A
	// peer that implements InputPasser receives a 2026-07-28 server's input
	// requests as an *InputRequired error instead.
	Peer Peer
	// InputResponses and RequestState retry a call that returned
	// *InputRequired, verbatim.
	InputResponses mcp.InputResponseMap
	RequestState   string
	// Client identifies the caller for the call quota (policy.quota) and
	// the audit log; "" is the process itself. The gateway sets the
	// configured name of a named client, else one per client session.
	Client string
	// Caller is the configured name of the gateway client making the
	// call, and Profile the profile it calls through; "" for none. Policy
	// rules limited to clients and profiles match on them, and the audit
	// log keeps the profile.
	Caller, Profile string
	// Confirm overrides Options.Confirm for this call.
	Confirm Confirmer
	// RawOnly leaves Result.Text empty, for callers that forward Raw and
	// never show the projection (the gateway): projecting a large result
	// costs a full decode.
	RawOnly bool
	// KeepWhole returns a large result whole instead of spilling it (see
	// config.Context.SpillBytes), for callers that show it to a person
	// rather than a model, like the CLI. Text blocks are still capped at
	// security.resultTextMaxBytes.
	KeepWhole bool
}

// Result is a tool's answer.
type Result struct {
	Tool   string `json:"tool"`   // canonical ID of the tool called
	Server string `json:"server"` // server that answered
	// Raw is the MCP CallToolResult exactly as the server sent it,
	// including fields and content types Switchboard does not know.
	Raw json.RawMessage `json:"result"`
	// IsError is the result's isError flag: the tool ran and failed.
	IsError bool `json:"isError"`
	// Text is the projection for a model: text as text, media and unknown
	// content as one descriptive line each, structured content as JSON.
	Text string `json:"text"`
}

// ResourceResult is a read resource.
type ResourceResult struct {
	ID     string                  `json:"id"`
	Result *mcp.ReadResourceResult `json:"result"`
	Text   string                  `json:"text"`
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	ID     string               `json:"id"`
	Result *mcp.GetPromptResult `json:"result"`
	Text   string               `json:"text"`
}

// Host is a set of connected servers. Create it with Open.
//
// Each server owns its state behind its own lock (see server); the Host
// keeps only what spans servers. Lock order: reloadMu, then mu, then a
// server's mu (see server); pinsMu, then a server's mu. A call takes none
// of the Host's locks: it reads comp and snap, and touches only its own
// server.
type Host struct {
	// Fixed at Open.
	log        *slog.Logger
	opts       upstream.Options
	relists    chan string   // servers whose lists changed, for relister
	pinNotices chan struct{} // the store's change feed said pins changed, for relister
	pinsEvery  time.Duration // Options.PinsRecheck, defaulted
	stop       chan struct{}
	confirm    Confirmer
	store      store.Store       // may be nil
	audit      *auditLog         // nil without a store
	onCall     func(CallRecord)  // may be nil
	onEvent    func(ServerEvent) // may be nil
	tracer     trace.Tracer      // nil: no spans
	notify     *notifier         // nil without OnChange
	life       context.Context   // ends when Close starts
	cancel     context.CancelFunc
	watchers   sync.WaitGroup // every goroutine the Host starts; Close waits

	comp      atomic.Pointer[composition]       // the configuration in force and its servers; Reload swaps it
	snap      atomic.Pointer[registry.Snapshot] // the aggregate; rebuild swaps it, nothing mutates one
	closed    atomic.Bool                       // Close was called; set under mu
	opened    atomic.Bool                       // Open has returned
	spilled   atomic.Bool                       // a result was spilled: mcp_read_resource is listed from then on
	storeDown atomic.Bool                       // the store failed its last use (StoreUp)
	spills    spillStore                        // large results (spill.go); has its own lock
	sem       *semantic                         // the semantic tier of tool search (semantic.go); has its own lock
	live      liveCalls                         // the calls in flight (control.go); has its own lock

	// reloadMu serialises Reload.
	reloadMu sync.Mutex

	// pinsMu serialises refreshPins, so that pins read from the store
	// are never written over by an older read (the relister's and an
	// approval's at once). Taken with none of the Host's locks held; a
	// server's mu is taken inside it.
	pinsMu sync.Mutex

	loginTimeout time.Duration // OAuthOptions.LoginTimeout; fixed at Open

	// loginMu guards logins, the browser logins in progress by server
	// (login.go). Nothing else is locked while it is held.
	loginMu sync.Mutex
	logins  map[string]*Login

	// mu serialises rebuild (so that snapshots are made, and swapped in,
	// one at a time), the swap of comp against Close, and guards index,
	// indexed and found.
	mu      sync.RWMutex
	index   *search.Index             // tool search over snap (search.go)
	indexed map[string]*registry.Tool // what index holds, by model-facing name
	found   []string                  // deferred tools a tool_search found, oldest first: listed (builtin.go)
}

// composition is the configuration in force, its compiled policy and the
// servers it names (one per cfg.Servers entry, by name). Reload replaces
// it whole; nothing changes one.
type composition struct {
	cfg     *config.Config
	pol     *policy.Engine
	servers map[string]*server
}

// Open connects every enabled server in parallel, each bounded by its
// startup timeout, and discovers what it offers; it waits for them at most
// opts.StartupWait (see there), and the others join when they are ready.
// A server that fails, hangs or crashes is reported (Servers, and a
// warning in the log) and the others load as usual: Open itself fails only
// when ctx ends first. A server whose start-up failed in an earlier run
// (the Store keeps its schedule) is not dialled before its next attempt is
// due.
func Open(ctx context.Context, cfg *config.Config, opts *Options) (*Host, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	info := &mcp.Implementation{Name: "switchboard", Version: "dev"}
	if opts.ClientName != "" {
		info.Name = opts.ClientName
	}
	if opts.ClientVersion != "" {
		info.Version = opts.ClientVersion
	}
	pol, err := newPolicy(cfg.Policy, opts.Store, log)
	if err != nil {
		return nil, err
	}
	h := &Host{
		log:     log,
		confirm: opts.Confirm,
		opts: upstream.Options{
			Logger:            log,
			ClientInfo:        info,
			ProbeTimeout:      opts.ProbeTimeout,
			StopStage:         opts.StopTimeout,
			MaxFrame:          opts.MaxFrame,
			Forward:           opts.Forward,
			OnResourceUpdated: opts.OnResourceUpdated,
			OAuth:             opts.OAuth.upstream(),
		},
		store:      opts.Store,
		notify:     newNotifier(opts.OnChange),
		onCall:     opts.OnCall,
		onEvent:    opts.OnEvent,
		relists:    make(chan string, 64),
		pinNotices: make(chan struct{}, 1),
		pinsEvery:  cmp.Or(opts.PinsRecheck, time.Second),
		stop:       make(chan struct{}),
		sem:        newSemantic(),

		loginTimeout: opts.OAuth.loginTimeout(),
	}
	h.opts.OnListChanged = h.listChanged
	h.audit = newAuditLog(opts.Store, log, h.storeReached)
	if opts.TracerProvider != nil {
		h.tracer = opts.TracerProvider.Tracer(TracerName)
		h.opts.TracerProvider = opts.TracerProvider
	}
	h.life, h.cancel = context.WithCancel(context.Background())
	comp := &composition{cfg: cfg, pol: pol, servers: make(map[string]*server, len(cfg.Servers))}
	for _, sc := range cfg.Servers {
		comp.servers[sc.Name] = h.newServer(ctx, cfg, sc)
	}
	h.comp.Store(comp)
	// Every dial runs on a goroutine of the Host (Close waits for it), so
	// that one still under way when Open returns goes on: it joins the
	// aggregate through rebuild and OnChange when it is ready.
	var wg sync.WaitGroup
	var later []*server // advertised from the store, connected in the background
	for _, sc := range cfg.Servers {
		s := comp.servers[sc.Name]
		if !runnable(sc) {
			continue
		}
		if s.cached {
			if sc.Transport != config.TransportStdio || sc.Lifecycle.Eager {
				later = append(later, s)
			}
			continue
		}
		wg.Add(1)
		h.watchers.Go(func() {
			s.ensure(h.life) //nolint:errcheck // recorded in s
			wg.Done()
			s.retryStartup() // returns at once unless the attempt failed
		})
	}
	all := make(chan struct{})
	h.watchers.Go(func() { wg.Wait(); close(all) }) // ends with the dials, each bounded by its startup timeout
	var bound <-chan time.Time
	if opts.StartupWait != 0 {
		t := time.NewTimer(max(opts.StartupWait, 0))
		defer t.Stop()
		bound = t.C
	}
	select {
	case <-all:
	case <-bound:
	case <-ctx.Done():
	}
	// opened is set before the snapshot is built: a dial that ends before
	// it is in this snapshot, one that ends after rebuilds by itself.
	h.opened.Store(true)
	h.rebuild()
	h.watchers.Go(h.relister)
	if n, ok := h.store.(store.Notifier); ok {
		h.watchers.Go(func() { h.follow(n) })
	}
	h.watchers.Go(h.embedTools)
	if h.notify != nil {
		h.watchers.Go(func() { h.notify.run(h.stop) })
	}
	for _, s := range later {
		h.watchers.Go(func() { s.ensure(h.life) }) //nolint:errcheck // recorded in s
	}
	if err := ctx.Err(); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// rebuild makes a new registry snapshot from the servers' catalogues.
// The catalogue of a server whose connection ended stays listed: its calls
// report it unavailable, which tells the model more than a vanished tool.
func (h *Host) rebuild() {
	h.mu.Lock()
	defer h.mu.Unlock()
	comp := h.comp.Load()
	cats := make(map[string]*catalog.Catalog, len(comp.servers))
	for name, s := range comp.servers {
		s.mu.Lock()
		cats[name] = s.catalog
		s.mu.Unlock()
	}
	var all []string
	var sources []registry.Source
	held, writes := h.flagAndHold(comp, cats)
	for _, sc := range comp.cfg.Servers {
		all = append(all, sc.Name)
		cat := cats[sc.Name]
		if cat == nil {
			continue
		}
		s := comp.servers[sc.Name]
		s.mu.Lock()
		drifted, w := h.checkDriftLocked(s, sc, cat)
		s.mu.Unlock()
		writes = append(writes, w...)
		for tool := range drifted {
			if held[sc.Name] == nil {
				held[sc.Name] = map[string]bool{}
			}
			held[sc.Name][tool] = true
		}
		sources = append(sources, sourceOf(sc, cat, held[sc.Name]))
	}
	if len(writes) > 0 {
		h.watchers.Go(func() { h.writeDrift(writes) })
	}
	snap := registry.Build(all, sources)
	for _, c := range snap.Collisions {
		ids := make([]string, len(c.IDs))
		for i, id := range c.IDs {
			ids[i] = id.String()
		}
		h.log.Warn("model-facing name wanted by several tools; each got a hashed name", "name", c.Name, "tools", ids)
	}
	for _, s := range snap.Skipped {
		h.log.Warn("tool skipped", "reason", s)
	}
	h.snap.Store(snap)
	h.reindex(snap)
}

// config returns the configuration in force (Reload replaces it).
func (h *Host) config() *config.Config { return h.comp.Load().cfg }

// snapshot returns the aggregate (rebuild replaces it).
func (h *Host) snapshot() *registry.Snapshot { return h.snap.Load() }

// Servers returns the status of every configured server, sorted by name.
func (h *Host) Servers() []ServerStatus {
	comp := h.comp.Load()
	out := make([]ServerStatus, 0, len(comp.cfg.Servers))
	index := map[string]int{}
	for _, sc := range comp.cfg.Servers {
		s := comp.servers[sc.Name]
		v := s.view()
		st := ServerStatus{Name: sc.Name, Transport: string(sc.Transport), Trust: string(sc.Trust.Level()), State: v.state, Since: v.since}
		if v.err != nil {
			st.LastError = v.err.Error()
		}
		if v.conn != nil {
			info := v.conn.Info()
			st.ProtocolVersion = info.ProtocolVersion
			st.ServerInfo = info.ServerInfo
			st.Stderr = v.conn.StderrTail()
			st.Auth = v.conn.Auth()
			st.PID = v.conn.PID()
		} else if fault.CodeOf(v.err) == fault.CodeNeedsLogin {
			st.Auth = upstream.NeedsLoginState(sc.Name)
		} else if v.err == nil {
			st.Auth = upstream.StoredAuth(h.opts.OAuth, sc)
		}
		if v.vetted != nil {
			st.Findings = append(st.Findings, v.vetted.Findings...)
		}
		st.Held = v.held
		st.HeldInjection = v.injHeld
		st.Findings = append(st.Findings, v.flags...)
		st.TrustScore = s.trust.current()
		if v.catalog != nil && !v.isHeld("") {
			st.Instructions = v.catalog.Instructions
			st.Resources = len(v.catalog.Resources)
			st.Templates = len(v.catalog.Templates)
			st.Prompts = len(v.catalog.Prompts)
		}
		index[sc.Name] = len(out)
		out = append(out, st)
	}
	for _, t := range h.snapshot().Tools() {
		if i, ok := index[t.ID.Server]; ok {
			out[i].Tools++ // registered tools, after filters
		}
	}
	return out
}

// Tools returns every tool of the servers, sorted by model-facing name,
// deferred ones included (and marked); ModelTools returns what to give a
// model.
func (h *Host) Tools() []Tool {
	snap, cfg := h.snapshot(), h.config()
	out := make([]Tool, 0, len(snap.Tools()))
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, t := range snap.Tools() {
		tool := toolOf(t)
		tool.Deferred = h.deferredLocked(cfg, t)
		out = append(out, tool)
	}
	return out
}

func toolOf(t *registry.Tool) Tool {
	return Tool{
		Name:         t.Name,
		ID:           t.ID.String(),
		Server:       t.ID.Server,
		Title:        t.Tool.Title,
		Description:  t.Tool.Description,
		InputSchema:  schemaJSON(t.Tool.InputSchema),
		OutputSchema: schemaJSON(t.Tool.OutputSchema),
		Annotations:  t.Tool.Annotations,
	}
}

func schemaJSON(s any) json.RawMessage {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}

// Tool describes one tool, by model-facing name or canonical ID, or a
// built-in tool that is on (see ModelTools).
func (h *Host) Tool(name string) (Tool, error) {
	if b := h.lookupBuiltin(name); b != nil {
		return b.tool, nil
	}
	t, err := h.lookupTool(h.snapshot(), name)
	if err != nil {
		return Tool{}, err
	}
	return toolOf(t), nil
}

func (h *Host) lookupTool(snap *registry.Snapshot, name string) (*registry.Tool, error) {
	if t, ok := snap.Tool(name); ok {
		return t, nil
	}
	if herr := h.heldTool(name); herr != nil {
		return nil, herr
	}
	msg := fmt.Sprintf("no tool %q", name)
	if id, ok := snap.Resolve(name); ok {
		if err := h.serverUnavailable(id.Server); err != nil {
			return nil, err
		}
	}
	// A model-facing name of a server that is not ready: its tools are not
	// known, but the prefix says whose it would be.
	for _, sc := range h.config().Servers {
		if p := names.Prefix(sc.Prefix); p != "" && strings.HasPrefix(name, p+names.Sep) {
			if err := h.serverUnavailable(sc.Name); err != nil {
				return nil, err
			}
		}
	}
	if s := registry.Suggest(name, snap.ToolNames()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; `switchboard tools` lists them"
	}
	return nil, fault.New(fault.CodeNotFound, "", "", errors.New(msg))
}

// serverUnavailable explains why a configured server cannot take requests,
// or returns nil when it can.
func (h *Host) serverUnavailable(name string) error {
	s := h.comp.Load().servers[name]
	if s == nil {
		return nil
	}
	v := s.view()
	switch {
	case v.state == StateReady:
		return nil
	case h.closed.Load():
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the host is closed"))
	case v.state == StateDisabled:
		return fault.New(fault.CodeUnavailable, name, "", errors.New(`the server is disabled ("enabled": false in the configuration)`))
	case v.state == StateMisconfigured:
		return fault.New(fault.CodeUnavailable, name, "", v.err)
	case v.catalog != nil:
		return nil // its tools are known; a call dials it
	case s.retryAfterLogin():
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the server is still starting"))
	case v.state == StateStarting:
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the server is still starting"))
	case v.err == nil:
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the server has not started yet"))
	}
	code := fault.CodeUnavailable
	switch c := fault.CodeOf(v.err); c {
	case fault.CodeRuntimeMissing, fault.CodeRuntimeTooOld, fault.CodeNeedsLogin:
		// Not retryable: it fails the same way until the machine or
		// the configuration changes, and the code says what to fix.
		code = c
	}
	return fault.New(code, name, "", privateAs(v.err, fmt.Errorf("the server failed to start: %s", withoutServer(v.err, name))))
}

// privateAs returns err, marked fault.Private when src is: a message that
// quotes a private error is private too.
func privateAs(src, err error) error {
	if fault.IsPrivate(src) {
		return &fault.Private{Err: err}
	}
	return err
}

// withoutServer renders err without a leading `server "name": `, for
// messages that already name the server.
func withoutServer(err error, name string) string {
	if err == nil {
		return "no reason recorded"
	}
	msg, _ := strings.CutPrefix(err.Error(), fmt.Sprintf("server %q: ", name))
	return msg
}

// Await waits while the named server is starting (connecting, its tools
// not known yet), bounded by ctx and its startupTimeoutMs, and waits for
// that server only. It returns nil when the server can take requests (it
// is ready, or its tools are known from its saved catalogue), and
// otherwise why not: its start-up error, or ctx's.
func (h *Host) Await(ctx context.Context, server string) error {
	s := h.comp.Load().servers[server]
	if s == nil {
		return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", server))
	}
	if s.currentState() == StateStarting && !h.closed.Load() {
		// The dial runs on a goroutine of the Host, bounded by the
		// startup timeout and Close, so that ctx bounds only the wait: a
		// dial this call would start itself could not be cut short.
		done := make(chan struct{})
		h.watchers.Go(func() {
			defer close(done)
			s.ensure(h.life) //nolint:errcheck // recorded in s
		})
		select {
		case <-done:
		case <-ctx.Done():
			return fault.New(fault.CodeTimeout, server, "connect", fmt.Errorf("the server is still starting: %w", ctx.Err()))
		}
	}
	return h.serverUnavailable(server)
}

// Starting returns the name of the server that a lookup failed on because
// it is still starting (see Await), or "".
func (h *Host) Starting(err error) string {
	var fe *fault.Error
	if fault.CodeOf(err) != fault.CodeUnavailable || !errors.As(err, &fe) || fe.Server == "" {
		return ""
	}
	s := h.comp.Load().servers[fe.Server]
	if s == nil || s.currentState() != StateStarting {
		return ""
	}
	return fe.Server
}

// conn returns the live connection of a server, dialling it if need be
// (see ensure).
func (h *Host) conn(ctx context.Context, name string) (*upstream.Conn, error) {
	s := h.comp.Load().servers[name]
	if s == nil {
		return nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", name))
	}
	return s.ensure(ctx)
}

// Call calls a tool by model-facing name or canonical ID. args is the JSON
// arguments object; nil means {}. The call is bounded by the server's
// callTimeout, and cancelling ctx cancels it upstream.
//
// A server's tools may have changed behind its saved catalogue (see
// rediscover.go): a name that misses while the catalogue may be stale, or
// a call the server answers with "unknown tool", discovers the server
// again and is made again, once; a call that may have run is never made
// again. A server started for the call is discovered before anything is
// sent, and the call checked against the approved definitions.
func (h *Host) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	if h.tracer != nil {
		var span trace.Span
		ctx, span = h.tracer.Start(ctx, "tools/call "+name, trace.WithAttributes(attribute.String(AttrTool, name)))
		defer span.End()
	}
	if b := h.lookupBuiltin(name); b != nil {
		start := time.Now()
		out, err := h.callBuiltin(ctx, b, args, opts)
		h.finished(ctx, "", name, true, args, opts, start, out, err, false)
		return out, err
	}
	t, rediscovered, err := h.lookupFresh(ctx, name)
	if server := h.Starting(err); server != "" {
		// Its server is still starting: wait for that one, then look again.
		if err = h.Await(ctx, server); err == nil {
			t, rediscovered, err = h.lookupFresh(ctx, name)
		}
	}
	if err != nil {
		if c := fault.CodeOf(err); c == fault.CodeDefinitionChanged || c == fault.CodeHeldInjection {
			if id, held := h.heldID(name); held {
				h.finished(ctx, id.Server, id.String(), true, args, opts, time.Now(), nil, err, true)
				return nil, err
			}
		}
		h.finished(ctx, "", name, false, args, opts, time.Now(), nil, err, false)
		return nil, err
	}
	if len(args) > 0 && !isObject(args) {
		err := fault.New(fault.CodeInvalidInput, t.ID.Server, fmt.Sprintf("call tool %q", t.ID.Name), errors.New("arguments must be a JSON object"))
		h.finished(ctx, t.ID.Server, t.ID.String(), true, args, opts, time.Now(), nil, err, false)
		return nil, err
	}
	comp := h.comp.Load()
	s := comp.servers[t.ID.Server]
	if s == nil {
		// A reload removed the server after the tool was looked up.
		err := fault.New(fault.CodeNotFound, t.ID.Server, fmt.Sprintf("call tool %q", t.ID.Name), errors.New("the server is no longer configured"))
		h.finished(ctx, t.ID.Server, t.ID.String(), true, args, opts, time.Now(), nil, err, false)
		return nil, err
	}
	sc := s.cfg.Load() // this call's settings, whatever a reload swaps in meanwhile
	if err := h.authorize(ctx, comp.pol, t, sc, args, opts); err != nil {
		h.finished(ctx, t.ID.Server, t.ID.String(), true, args, opts, time.Now(), nil, err, true)
		return nil, err
	}
	start := time.Now()
	s.beginCall()
	copts, ended := h.live.begin(t.ID.Server, t.ID.String(), opts)
	out, err := h.call(ctx, s, sc, comp.pol, t, args, copts, !rediscovered)
	ended()
	s.endCall()
	h.finished(ctx, t.ID.Server, t.ID.String(), true, args, opts, start, out, err, true)
	switch fault.CodeOf(err) {
	case fault.CodeInvalidInput, fault.CodeNotFound, fault.CodeDefinitionChanged, fault.CodeHeldInjection:
		// The call did not fit the server's tools: says nothing of how
		// the server behaves.
	default:
		switch {
		case err != nil:
			s.trust.add(outcomeError)
		case out.IsError:
			s.trust.add(outcomeToolErr)
		default:
			s.trust.add(outcomeOK)
		}
	}
	return out, err
}

// finished records a call that ended (or was refused before it went out:
// by policy, confirmation, quota or a held definition): a row in the audit
// log when audited (the audit log shows what was asked as well as what
// ran: refusals, not malformed requests), a record for OnCall, and the
// outcome on the call's span.
func (h *Host) finished(ctx context.Context, server, tool string, catalogued bool, args json.RawMessage, opts *CallOptions, start time.Time, res *Result, err error, audited bool) {
	if !h.observing() && h.tracer == nil {
		return
	}
	rec := callRecord(server, tool, catalogued, opts, args, start, res, err)
	if audited && h.audit.on() {
		h.audit.record(auditRow(&rec, args))
	}
	h.observe(&rec)
	if h.tracer != nil {
		endSpan(trace.SpanFromContext(ctx), &rec, err)
	}
}

// call makes an authorized call: it dials the server if need be, checks
// the tool against the catalogue the connection holds (recheck), calls,
// and guards the result. With retry, a call the server answers with
// "unknown tool" is made once more after the server is discovered again.
func (h *Host) call(ctx context.Context, s *server, sc *config.Server, pol *policy.Engine, t *registry.Tool, args json.RawMessage, opts *CallOptions, retry bool) (*Result, error) {
	// A server started on first use may take its startup timeout on top
	// of the call's.
	conn, err := s.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if t, err = h.recheck(ctx, s, sc, pol, t, args, opts); err != nil {
		return nil, err
	}
	if h.tracer != nil {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(AttrEra, upstream.EraOf(conn.Info().ProtocolVersion)))
	}
	uopts, ctx := callOptions(ctx, opts)
	res, err := conn.CallTool(ctx, t.ID.Name, args, uopts)
	if fault.CodeOf(err) == fault.CodeUnavailable && ctx.Err() == nil {
		// The connection was already gone, so the request was never sent
		// (a lost request is unknown_outcome, never this): this is the
		// call that redials, once.
		s.mu.Lock()
		a := s.attempt
		s.mu.Unlock()
		s.dropped(conn, a, err)
		if conn, err = s.ensure(ctx); err != nil {
			return nil, err
		}
		if t, err = h.recheck(ctx, s, sc, pol, t, args, opts); err != nil {
			return nil, err
		}
		res, err = conn.CallTool(ctx, t.ID.Name, args, uopts)
	}
	if retry && upstream.UnknownTool(t.ID.Name, res, err) && ctx.Err() == nil {
		// The server does not know the tool, so it never ran: its tools
		// changed behind its catalogue. Discover them again, and call
		// once more if the tool is still offered.
		h.log.Debug("server does not know a catalogued tool; discovering it again", "server", s.name, "tool", t.ID.Name)
		if err := s.rediscover(ctx, false); err != nil {
			return nil, err
		}
		return h.call(ctx, s, sc, pol, t, args, opts, false)
	}
	if err != nil {
		return nil, fromUpstream(err)
	}
	var raw json.RawMessage
	if opts != nil && opts.KeepWhole {
		raw, err = h.guardResult(sc, t.ID.Name, res.Raw, 0)
	} else {
		raw, err = h.guardAndSpill(sc, t.ID.Name, res.Raw, false, t.Tool.OutputSchema != nil)
	}
	if err != nil {
		return nil, err
	}
	out := &Result{Tool: t.ID.String(), Server: t.ID.Server, Raw: raw, IsError: res.IsError}
	if opts == nil || !opts.RawOnly {
		out.Text = content.ToolText(raw)
	}
	return out, nil
}

// isObject reports whether raw is one valid JSON object, without decoding
// it: arguments are forwarded as they are, so validity is all that counts.
func isObject(raw json.RawMessage) bool {
	for i, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return jsonscan.Valid(raw[i:])
		}
		return false
	}
	return false
}

// Close closes every connection and stops every server process, waiting
// for the bounded teardown. It is safe to call more than once.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		return nil
	}
	h.closed.Store(true) // under mu: a Reload swaps comp only while it is not set
	comp := h.comp.Load()
	h.mu.Unlock()
	close(h.stop)
	h.cancel()
	servers := make([]*server, 0, len(comp.servers))
	for _, s := range comp.servers {
		servers = append(servers, s)
	}
	err := h.stopAll(servers)
	// A Reload past its swap finishes (it sees the host closed and stops
	// what it started) before the watchers are waited for: it may start
	// some.
	h.reloadMu.Lock()
	h.reloadMu.Unlock()
	// Calls in flight on the closed connections end with an error; their
	// rows, recorded after this, are dropped and counted.
	h.audit.close()
	h.watchers.Wait()
	h.saveScores()
	return err
}
