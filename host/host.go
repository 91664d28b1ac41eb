// Package host connects to many MCP servers at once and puts everything
// they offer under one namespace, for Go programs that drive AI agents.
//
// [Open] a [Host] from a configuration (package config: [config.Load] a
// file, or build one in code with [config.Stdio], [config.HTTP] and
// [config.New]), list what it offers, call tools:
//
//	cfg, err := config.Load(path, nil)
//	if err != nil { ... }
//	h, err := host.Open(ctx, cfg, nil)
//	if err != nil { ... }
//	defer h.Close()
//
//	for _, s := range h.Servers() {
//		fmt.Println(s.Name, s.State, s.LastError) // a server that failed does not stop the others
//	}
//	for _, t := range h.Tools() {
//		fmt.Println(t.Name, t.Description) // t.Name is the model-facing name, e.g. "files__read_file"
//	}
//	res, err := h.Call(ctx, "files__read_file", json.RawMessage(`{"path":"/srv/docs/a.md"}`), nil)
//	switch {
//	case errors.Is(err, host.ErrTimeout): // the server did not answer in time
//	case err != nil: // unavailable, not found, protocol, invalid params: see package fault
//	case res.IsError: // the tool ran and failed: res.Text says why; this is data, not a Go error
//	default:
//		fmt.Println(res.Text) // or res.Structured(), res.Raw
//	}
//
// Call [MaybeRunShim] first in main: on Linux each stdio server then runs
// in a PID namespace of its own, so that nothing it starts outlives it.
//
// # Names
//
// Every tool has a canonical ID, "<server>:<tool>", and a model-facing name
// that matches ^[a-zA-Z0-9_-]{1,64}$: "<prefix>__<tool>" where that is
// valid, else a sanitised form with a hash suffix (see docs/CONFIGURATION.md,
// "Names"). [Host.Call], [View.Find] and the other lookups accept either.
// Resources and prompts are named by canonical ID, "<server>:<uri>" and
// "<server>:<prompt>". Server names may contain colons: the longest
// configured server name wins.
//
// # Views
//
// A program that serves several callers gives each its [View]: made from a
// [Caller] (who calls, through which profile of the configuration), it
// lists, searches, calls, reads and renders only what that profile holds,
// with its own deferred tools and tool_search, and answers anything else
// as if it did not exist. The Host's own methods are the view of the
// operator, who sees everything, but for [Host.Call] and [Host.GetPrompt],
// which keep to the profile their [CallOptions] name.
//
// # State
//
// Open keeps the Host's state in a store: the embedded SQLite database in
// [Options.StateDir] (Switchboard's home by default, shared with the
// switchboard command), or the PostgreSQL database the configuration's
// "store" names. It holds the approved tool definitions, so that a changed
// definition is held back until approved ([Host.Held], [Host.Approve]),
// and the audit log ([Host.Audit]). [Options.Ephemeral] opens none.
//
// # Errors
//
// Transport and protocol failures are [*fault.Error] values; test them with
// errors.Is against [ErrTimeout], [ErrUnavailable], [ErrProtocol],
// [ErrNotFound], [ErrInvalidParams] and [ErrUnknownOutcome], or against
// package fault's sentinel of any other code, or read [fault.CodeOf]. A
// request that finds its server still starting is [ErrUnavailable] and
// [ErrStarting], naming the server, which [Host.Ready] waits for. A
// tool that returns isError is a successful Call whose [Result] has
// IsError set.
//
// A Host is safe for concurrent use. [Host.Close] stops every server
// process.
package host

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
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
	// StopTimeout bounds the stages of stopping a stdio server that follow
	// closing its stdin and SIGKILL. Zero means 5 s. The wait after
	// SIGTERM is launcher.DefaultTermGrace (2 s), or StopTimeout if shorter.
	StopTimeout time.Duration
	// LeftoverDir, when set, is where a stdio server that cannot have a
	// PID namespace of its own has its process group recorded while it
	// runs, so that what a killed host left of it is killed at the next
	// start (see launcher.Spec.LeftoverDir). "" records nothing.
	LeftoverDir string
	// SwitchboardHome is never opened to a sandboxed stdio server: a
	// grant in a server's "sandbox" that would open it is refused. ""
	// means Switchboard's home as the switchboard command finds it
	// ($SWITCHBOARD_HOME, else ~/.switchboard).
	SwitchboardHome string
	// SandboxCacheDir holds each sandboxed stdio server's private
	// directory (its npm and uv caches, kept between starts), named after
	// the server. "" means $XDG_CACHE_HOME/switchboard/servers, else
	// ~/.cache/switchboard/servers. Never in SwitchboardHome.
	SandboxCacheDir string
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
	// Approve puts the calls held for a person's approval
	// (policy.approve, the data-flow rule) to a person while they wait
	// (CallOptions.Approve overrides it per call). Nil: a held call ends
	// approval_required at once, and a person approves it on the status
	// page or with `switchboard approve-call`; made again, it goes
	// through.
	Approve Approver
	// Clock is the time of held calls' expiry; nil means time.Now.
	Clock func() time.Time
	// StartupWait bounds how long Open waits for the servers it dials (the
	// enabled servers without a saved catalogue): a server still starting
	// when it has passed goes on starting in the background, shows as
	// "starting", and joins the aggregate when it is ready (OnChange is
	// called); a call to one of its tools waits for it. Zero waits until
	// every server is ready or has failed, each bounded by its
	// startupTimeoutMs; negative does not wait at all (the gateway).
	StartupWait time.Duration
	// NoStart makes Open start no server: one with a saved catalogue is
	// advertised from it as usual, one without is listed idle with no
	// tools. A server starts on first use (Call, Refresh). For a program
	// that reads what is known and calls little or nothing (the CLI's
	// search, and its get of one server).
	NoStart bool
	// ApproveLaunches names the servers whose launch the person running
	// the program approves as it opens them (the CLI's check of a server
	// it adds or edits): each is pinned as it is configured, whatever was
	// pinned before, instead of being held (see docs/PINS.md). A Host
	// given any opens only part of a configuration, and so does not mark
	// a store that pins no launch yet as one that does. nil approves none.
	ApproveLaunches []string
	// StateDir is the directory of the state store that Open opens when
	// the configuration names no PostgreSQL store (its "store" section):
	// the embedded SQLite database state.db in it, made if need be. The
	// store keeps saved catalogues (a server whose configuration is
	// unchanged is advertised at once, without being started), approved
	// tool definitions (a changed definition is held back until approved:
	// see [Host.Held] and [Host.Approve]), the audit log ([Host.Audit]),
	// trust scores, the quota's counts (policy.quota holds across every
	// process sharing the store, and across reloads) and the tool vectors
	// of the semantic search tier. "" means Switchboard's home, as the
	// switchboard command finds it: $SWITCHBOARD_HOME, else
	// ~/.switchboard. The Host closes the store it opened.
	StateDir string
	// Ephemeral opens no state store: every server is discovered at
	// start, nothing is pinned, held or logged, and the quota is counted
	// in memory. Since a new definition could then never be approved,
	// Open and Reload refuse a configuration with an enabled server under
	// "approval": "manual"; and with no definition remembered, one that
	// changes is served as if first seen, whatever "onDrift" says. For
	// short checks that serve no one.
	Ephemeral bool
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
	// TracerProvider, when set, traces each Call as a span
	// and each request to a server as its child, with the trace context
	// passed to the server in _meta (and in the headers of an HTTP
	// request). Nil traces nothing, at no cost.
	TracerProvider trace.TracerProvider

	// lock, set by hostlink.WithLock, is the only thing served.
	lock serverLock
	// pace, set by the package's tests, is the clock the relister paces
	// re-listings by; nil is the wall clock.
	pace paceClock
	// store, set by hostlink.WithStore, is a state store already open,
	// used in place of the one Open would open, whatever StateDir and
	// Ephemeral say; Close does not close it. The switchboard command
	// passes its own. A store shared by several processes (one with a
	// change feed) brings their approvals here at once; while it is
	// unreachable the Host serves from memory, and the gateway's
	// readiness says so.
	store store.Store
}

// Host is a set of connected servers under one namespace. Create it with
// [Open]; what one caller may see and do is its [View].
type Host struct {
	// Each server owns its state behind its own lock (see server); the
	// Host keeps only what spans servers. Lock order: reloadMu, then mu,
	// then a server's mu (see server); pinsMu, then a server's mu. A call
	// takes none of the Host's locks: it reads comp and snap, and touches
	// only its own server.

	// Fixed at Open.
	log        *slog.Logger
	opts       upstream.Options
	relists    chan string   // servers whose lists changed, for relister
	pinNotices chan struct{} // the store's change feed said pins changed, for relister
	pinsEvery  time.Duration // Options.PinsRecheck, defaulted
	stop       chan struct{}
	confirm    Confirmer
	approver   Approver          // Options.Approve; may be nil
	clock      func() time.Time  // Options.Clock; nil: time.Now
	pace       paceClock         // the relister's clock (relist.go): Options.pace, else the wall clock
	callGates  gatesCache        // policy.approve and policy.flow compiled (approval.go); has its own atomic
	store      store.Store       // nil when Ephemeral
	ownStore   bool              // Open opened store: Close closes it
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
	code      codeState                         // code mode's sandbox and declarations (codemode.go); has its own lock

	// reloadMu serialises Reload.
	reloadMu sync.Mutex

	// pinsMu serialises refreshPins, so that pins read from the store
	// are never written over by an older read (the relister's and an
	// approval's at once). Taken with none of the Host's locks held; a
	// server's mu is taken inside it.
	pinsMu sync.Mutex

	loginTimeout time.Duration // OAuthOptions.LoginTimeout; fixed at Open
	noStart      bool          // Options.NoStart; fixed at Open

	approveLaunch map[string]bool  // Options.ApproveLaunches; fixed at Open
	packages      *packageResolver // resolves npx-style launches' packages (launch.go); fixed at Open
	lock          serverLock       // Options.lock; nil without one; fixed at Open
	launchesBegun atomic.Bool      // the store pins launches (launch.go); set at Open

	grantKeys   *grantKeyring // OAuthOptions.GrantKey; nil without one; fixed at Open
	grantHolder string        // names this process in the store's refresh leases (grants.go); fixed at Open
	callers     callerPool    // callers' own connections (callers.go); has its own lock

	// loginMu guards logins, the browser logins in progress by server
	// (login.go). Nothing else is locked while it is held.
	loginMu sync.Mutex
	logins  map[string]*Login

	// budgetMu guards budgets, the cost of the tools listed for each
	// caller with a context window (budget.go). Nothing else is locked
	// while it is held.
	budgetMu sync.Mutex
	budgets  map[budgetKey]budgetCost

	// mu serialises rebuild (so that snapshots are made, and swapped in,
	// one at a time), the swap of comp against Close, and guards index,
	// indexed and found.
	mu      sync.RWMutex
	index   *search.Index             // tool search over snap (search.go)
	indexed map[string]*registry.Tool // what index holds, by model-facing name
	found   map[string][]string       // by profile ("" none): deferred tools its tool_search found, oldest first: listed (builtin.go)
}

// composition is the configuration in force, its compiled policy and the
// servers it names (one per cfg.Servers entry, by name). Reload replaces
// it whole; nothing changes one.
type composition struct {
	cfg     *config.Config
	pol     *policy.Engine
	servers map[string]*server
}

// MaybeRunShim must be the first call in the main function (and TestMain)
// of a program that uses Host with stdio servers. Switchboard starts each
// stdio server under a small shim, the program itself executed again:
// on Linux the shim is the first process of a PID namespace of its own, so
// that nothing the server starts, a process that left its group included,
// outlives it, and it dies with the program even when the program is
// killed. When this process was started as that shim, MaybeRunShim runs it
// and never returns; otherwise it returns at once. A program that does not
// call it starts its servers directly, and descendants that leave a
// server's process group can outlive it. Off Linux it does nothing.
func MaybeRunShim() { upstream.MaybeRunShim() }

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
	// A configuration a program built by hand is held to what Parse and
	// Reload hold one to.
	if err := cfg.Validate(); err != nil {
		return nil, err
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
	st, owned, err := openStore(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	pol, err := newPolicy(cfg.Policy, st, log)
	if err == nil && st == nil {
		err = needsStore(cfg)
	}
	if err != nil {
		if owned {
			st.Close()
		}
		return nil, err
	}
	h := &Host{
		log:      log,
		confirm:  opts.Confirm,
		approver: opts.Approve,
		clock:    opts.Clock,
		pace:     cmp.Or(opts.pace, paceClock(realClock{})),
		opts: upstream.Options{
			Logger:            log,
			ClientInfo:        info,
			ProbeTimeout:      opts.ProbeTimeout,
			StopStage:         opts.StopTimeout,
			LeftoverDir:       opts.LeftoverDir,
			SwitchboardHome:   opts.SwitchboardHome,
			SandboxCacheDir:   opts.SandboxCacheDir,
			MaxFrame:          opts.MaxFrame,
			Forward:           opts.Forward,
			OnResourceUpdated: opts.OnResourceUpdated,
			OAuth:             opts.OAuth.upstream(),
		},
		store:      st,
		ownStore:   owned,
		notify:     newNotifier(opts.OnChange),
		onCall:     opts.OnCall,
		onEvent:    opts.OnEvent,
		relists:    make(chan string, 64),
		pinNotices: make(chan struct{}, 1),
		pinsEvery:  cmp.Or(opts.PinsRecheck, time.Second),
		stop:       make(chan struct{}),
		sem:        newSemantic(),

		loginTimeout: opts.OAuth.loginTimeout(),
		noStart:      opts.NoStart,
	}
	if h.grantKeys, err = grantKeys(opts.OAuth); err != nil {
		if owned {
			st.Close()
		}
		return nil, err
	}
	h.relayLogins()
	h.callers.init(opts.OAuth, &h.watchers)
	h.opts.OnListChanged = h.listChanged
	h.opts.CheckElicit = h.checkElicit
	if h.opts.SwitchboardHome == "" {
		h.opts.SwitchboardHome, _ = config.Home(nil)
	}
	if h.opts.SandboxCacheDir == "" {
		h.opts.SandboxCacheDir = sandboxCacheDir()
	}
	if h.opts.SwitchboardHome != "" && underHome(h.opts.SandboxCacheDir, h.opts.SwitchboardHome) {
		h.opts.SandboxCacheDir = "" // a server's cache is no way into the home
	}
	h.opts.RanBefore = h.ranBefore
	h.grantHolder = newGrantHolder()
	h.audit = newAuditLog(st, log, h.storeReached)
	if opts.TracerProvider != nil {
		h.tracer = opts.TracerProvider.Tracer(TracerName)
		h.opts.TracerProvider = opts.TracerProvider
	}
	h.life, h.cancel = context.WithCancel(context.Background())
	for _, name := range opts.ApproveLaunches {
		if h.approveLaunch == nil {
			h.approveLaunch = map[string]bool{}
		}
		h.approveLaunch[name] = true
	}
	h.packages = newPackageResolver()
	if opts.lock == nil && st != nil {
		h.packages.prefetch(ctx, cfg)
	}
	h.lock = opts.lock
	h.launchesBegun.Store(h.launchBegun(ctx))
	comp := &composition{cfg: cfg, pol: pol, servers: make(map[string]*server, len(cfg.Servers))}
	for _, sc := range cfg.Servers {
		comp.servers[sc.Name] = h.newServer(ctx, cfg, sc)
	}
	h.markLaunchesPinned(ctx, cfg)
	h.comp.Store(comp)
	// Every dial runs on a goroutine of the Host (Close waits for it), so
	// that one still under way when Open returns goes on: it joins the
	// aggregate through rebuild and OnChange when it is ready.
	var wg sync.WaitGroup
	var later []*server // advertised from the store, connected in the background
	for _, sc := range cfg.Servers {
		s := comp.servers[sc.Name]
		if !runnable(sc) || h.noStart || s.currentState() == StateHeld {
			continue
		}
		if s.cat.isCached() {
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
		cats[name] = s.cat.current()
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
		if h.lock != nil {
			cat = h.lockedLists(sc, cat)
		}
		drifted, w := s.holds.checkDrift(h, sc, cat)
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
	h.callers.closeAll()
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
	if h.ownStore {
		if cerr := h.store.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
