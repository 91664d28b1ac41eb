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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/content"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/policy"
	"github.com/switchboard-mcp/switchboard/internal/registry"
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
	// server; without an answer by then, the same process is asked for the
	// legacy initialize handshake. Zero means 5 s (at most half the
	// server's startupTimeoutMs).
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
}

// State is a server's connection state.
type State string

// The states.
const (
	StateReady    State = "ready"    // connected and discovered
	StateFailed   State = "failed"   // could not connect or discover; see LastError
	StateDisabled State = "disabled" // "enabled": false in the configuration
	StateClosed   State = "closed"   // the connection ended after start-up, or Close was called
)

// ServerStatus describes one configured server.
type ServerStatus struct {
	Name            string              `json:"name"`
	Transport       string              `json:"transport"`
	Trust           string              `json:"trust"`
	State           State               `json:"state"`
	ProtocolVersion string              `json:"protocolVersion,omitempty"`
	ServerInfo      *mcp.Implementation `json:"serverInfo,omitempty"`
	// Instructions are the server's instructions, cleaned and capped.
	Instructions string `json:"instructions,omitempty"`
	Tools        int    `json:"tools"`
	Resources    int    `json:"resources"`
	Templates    int    `json:"templates"`
	Prompts      int    `json:"prompts"`
	LastError    string `json:"lastError,omitempty"`
	// Stderr is the escaped tail of a stdio server's stderr (last 64 KiB).
	Stderr string `json:"stderr,omitempty"`
	// Findings are what Switchboard changed, refused or noticed in the
	// server's metadata (see Findings).
	Findings []Finding `json:"findings,omitempty"`
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

// Progress is one progress report of a running call.
type Progress = upstream.Progress

// Peer answers the requests a server makes during a call (sampling,
// elicitation, roots) and receives its log messages; see Options.Forward.
type Peer = upstream.Peer

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
	// Client identifies the caller for the call quota (policy.quota); ""
	// is the process itself. The gateway sets one per client session.
	Client string
	// Confirm overrides Options.Confirm for this call.
	Confirm Confirmer
	// RawOnly leaves Result.Text empty, for callers that forward Raw and
	// never show the projection (the gateway): projecting a large result
	// costs a full decode.
	RawOnly bool
}

// InputPasser and InputRequired: see CallOptions.Peer.
type (
	InputPasser   = upstream.InputPasser
	InputRequired = upstream.InputRequired
)

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
type Host struct {
	cfg      *config.Config
	log      *slog.Logger
	opts     upstream.Options
	onChange func()
	relists  chan string // servers whose lists changed, for relister
	stop     chan struct{}

	policy  *policy.Engine
	confirm Confirmer

	mu       sync.RWMutex
	servers  map[string]*server // by name; fixed after Open
	snap     *registry.Snapshot // swapped whole; never mutated
	closed   bool
	watchers sync.WaitGroup
}

// server is one configured server and, when connected, its connection.
// Its mutable fields are guarded by Host.mu.
type server struct {
	cfg     *config.Server
	conn    *upstream.Conn
	catalog *upstream.Catalog // vetted: what the registry is built from
	vetted  *ingest.Result    // the vetting that produced catalog
	flags   []Finding         // injection-pattern findings of the last rebuild
	state   State
	err     error
}

// Open connects every enabled server in parallel, each bounded by its
// startup timeout, and discovers what it offers. A server that fails,
// hangs or crashes is reported (Servers, and a warning in the log) and the
// others load as usual: Open itself fails only when ctx ends first.
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
	pol, err := newPolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	h := &Host{
		cfg:     cfg,
		log:     log,
		policy:  pol,
		confirm: opts.Confirm,
		opts: upstream.Options{
			Logger:            log,
			ClientInfo:        info,
			ProbeTimeout:      opts.ProbeTimeout,
			StopStage:         opts.StopTimeout,
			MaxFrame:          opts.MaxFrame,
			Forward:           opts.Forward,
			OnResourceUpdated: opts.OnResourceUpdated,
		},
		servers:  make(map[string]*server, len(cfg.Servers)),
		onChange: opts.OnChange,
		relists:  make(chan string, 64),
		stop:     make(chan struct{}),
	}
	h.opts.OnListChanged = h.listChanged
	var wg sync.WaitGroup
	for _, sc := range cfg.Servers {
		s := &server{cfg: sc, state: StateDisabled}
		h.servers[sc.Name] = s
		if !sc.Enabled {
			continue
		}
		wg.Go(func() { h.start(ctx, s) })
	}
	wg.Wait()
	h.rebuild()
	h.watchers.Go(h.relister)
	if err := ctx.Err(); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// start connects and discovers one server, recording the outcome. The
// startup timeout bounds the handshake and the discovery together.
func (h *Host) start(ctx context.Context, s *server) {
	name := s.cfg.Name
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartupTimeout)
	defer cancel()
	conn, err := upstream.Dial(ctx, s.cfg, &h.opts)
	var cat *upstream.Catalog
	if err == nil {
		cat, err = conn.Discover(ctx)
		if err != nil {
			conn.Close()
			conn = nil
		}
	}
	var vetted *ingest.Result
	if err == nil {
		vetted = h.vet(s.cfg, cat)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		s.state, s.err = StateFailed, err
		h.log.Warn("server failed to start; the others are unaffected", "server", name, "err", err)
		return
	}
	s.conn, s.catalog, s.vetted, s.state = conn, vetted.Catalog, vetted, StateReady
	h.watchers.Go(func() { h.watch(s, conn) })
}

// watch marks a server closed when its connection ends.
func (h *Host) watch(s *server, conn *upstream.Conn) {
	<-conn.Done()
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.conn != conn || h.closed {
		return
	}
	s.state, s.err = StateClosed, conn.Err()
	h.log.Warn("server connection ended", "server", s.cfg.Name, "err", s.err)
}

// relistDelay gathers a burst of list_changed notifications into one
// re-listing (servers often announce several changes at once, as
// server-everything does right after initialize).
const relistDelay = 200 * time.Millisecond

// listChanged queues a server for re-listing; it never blocks the
// connection's notification handler.
func (h *Host) listChanged(server string) {
	select {
	case h.relists <- server:
	default: // a burst: the queued re-listing covers it
	}
}

// relister re-lists servers whose lists changed, at most one pass per
// relistDelay, rebuilds the snapshot and tells OnChange. A failed re-listing
// keeps the previous catalogue. It ends when the host closes.
func (h *Host) relister() {
	for {
		var pending = map[string]bool{}
		select {
		case <-h.stop:
			return
		case s := <-h.relists:
			pending[s] = true
		}
		timer := time.NewTimer(relistDelay)
	gather:
		for {
			select {
			case <-h.stop:
				timer.Stop()
				return
			case s := <-h.relists:
				pending[s] = true
			case <-timer.C:
				break gather
			}
		}
		changed := false
		for name := range pending {
			changed = h.relist(name) || changed
		}
		if changed {
			h.rebuild()
			if h.onChange != nil {
				h.onChange()
			}
		}
	}
}

// relist discovers one server's lists again; it reports whether it got
// them.
func (h *Host) relist(name string) bool {
	h.mu.RLock()
	s := h.servers[name]
	conn := s.conn
	h.mu.RUnlock()
	if conn == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StartupTimeout)
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	cat, err := conn.Discover(ctx)
	if err != nil {
		h.log.Warn("re-listing after list_changed failed; keeping the previous lists", "server", name, "err", err)
		return false
	}
	vetted := h.vet(s.cfg, cat)
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.conn != conn {
		return false
	}
	s.catalog, s.vetted = vetted.Catalog, vetted
	h.log.Debug("re-listed after list_changed", "server", name, "tools", len(cat.Tools))
	return true
}

// rebuild makes a new registry snapshot from the servers' catalogues.
// The catalogue of a server whose connection ended stays listed: its calls
// report it unavailable, which tells the model more than a vanished tool.
func (h *Host) rebuild() {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []string
	var sources []registry.Source
	held := h.flagAndHold()
	for _, sc := range h.cfg.Servers {
		all = append(all, sc.Name)
		s := h.servers[sc.Name]
		if s.catalog == nil {
			continue
		}
		sources = append(sources, sourceOf(sc, s.catalog, held[sc.Name]))
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
	h.snap = snap
}

func (h *Host) snapshot() *registry.Snapshot {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.snap
}

// Servers returns the status of every configured server, sorted by name.
func (h *Host) Servers() []ServerStatus {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]ServerStatus, 0, len(h.cfg.Servers))
	index := map[string]int{}
	for _, sc := range h.cfg.Servers {
		s := h.servers[sc.Name]
		st := ServerStatus{Name: sc.Name, Transport: string(sc.Transport), Trust: string(sc.Trust.Level()), State: s.state}
		if s.err != nil {
			st.LastError = s.err.Error()
		}
		if s.conn != nil {
			info := s.conn.Info()
			st.ProtocolVersion = info.ProtocolVersion
			st.ServerInfo = info.ServerInfo
			st.Stderr = s.conn.StderrTail()
		}
		if s.vetted != nil {
			st.Findings = append(st.Findings, s.vetted.Findings...)
		}
		st.Findings = append(st.Findings, s.flags...)
		if s.catalog != nil {
			st.Instructions = s.catalog.Instructions
			st.Resources = len(s.catalog.Resources)
			st.Templates = len(s.catalog.Templates)
			st.Prompts = len(s.catalog.Prompts)
		}
		index[sc.Name] = len(out)
		out = append(out, st)
	}
	for _, t := range h.snap.Tools() {
		out[index[t.ID.Server]].Tools++ // registered tools, after filters
	}
	return out
}

// Tools returns every tool, sorted by model-facing name.
func (h *Host) Tools() []Tool {
	snap := h.snapshot()
	out := make([]Tool, 0, len(snap.Tools()))
	for _, t := range snap.Tools() {
		out = append(out, toolOf(t))
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

// Tool describes one tool, by model-facing name or canonical ID.
func (h *Host) Tool(name string) (Tool, error) {
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
	msg := fmt.Sprintf("no tool %q", name)
	if id, ok := snap.Resolve(name); ok {
		if err := h.serverUnavailable(id.Server); err != nil {
			return nil, err
		}
	}
	// A model-facing name of a server that is not ready: its tools are not
	// known, but the prefix says whose it would be.
	for _, sc := range h.cfg.Servers {
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
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.servers[name]
	switch {
	case s == nil, s.state == StateReady:
		return nil
	case h.closed:
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the host is closed"))
	case s.state == StateDisabled:
		return fault.New(fault.CodeUnavailable, name, "", errors.New(`the server is disabled ("enabled": false in the configuration)`))
	case s.state == StateFailed:
		return fault.New(fault.CodeUnavailable, name, "", fmt.Errorf("the server failed to start: %s", withoutServer(s.err, name)))
	}
	return fault.New(fault.CodeUnavailable, name, "", fmt.Errorf("the server's connection ended: %s", withoutServer(s.err, name)))
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

// conn returns the live connection of a server.
func (h *Host) conn(name string) (*upstream.Conn, error) {
	if err := h.serverUnavailable(name); err != nil {
		return nil, err
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.servers[name]
	if s == nil {
		return nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", name))
	}
	return s.conn, nil
}

// Call calls a tool by model-facing name or canonical ID. args is the JSON
// arguments object; nil means {}. The call is bounded by the server's
// callTimeout, and cancelling ctx cancels it upstream.
func (h *Host) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	t, err := h.lookupTool(h.snapshot(), name)
	if err != nil {
		return nil, err
	}
	if len(args) > 0 && !isObject(args) {
		return nil, fault.New(fault.CodeInvalidInput, t.ID.Server, fmt.Sprintf("call tool %q", t.ID.Name), errors.New("arguments must be a JSON object"))
	}
	conn, err := h.conn(t.ID.Server)
	if err != nil {
		return nil, err
	}
	sc := h.cfg.Server(t.ID.Server)
	if err := h.authorize(ctx, t, sc, args, opts); err != nil {
		return nil, err
	}
	uopts, ctx := callOptions(ctx, opts)
	res, err := conn.CallTool(ctx, t.ID.Name, args, uopts)
	if err != nil {
		return nil, err
	}
	raw, err := h.guardResult(sc, t.ID.Name, res.Raw)
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
			return json.Valid(raw[i:])
		}
		return false
	}
	return false
}

// callOptions translates CallOptions for the upstream package; the peer
// travels in the context.
func callOptions(ctx context.Context, opts *CallOptions) (*upstream.CallOptions, context.Context) {
	if opts == nil {
		return nil, ctx
	}
	if opts.Peer != nil {
		ctx = upstream.WithPeer(ctx, opts.Peer)
	}
	return &upstream.CallOptions{Progress: opts.Progress, InputResponses: opts.InputResponses, RequestState: opts.RequestState}, ctx
}

// Resources returns every resource, sorted by canonical ID.
func (h *Host) Resources() []Resource {
	snap := h.snapshot()
	out := make([]Resource, 0, len(snap.Resources()))
	for _, r := range snap.Resources() {
		out = append(out, Resource{
			ID: r.ID.String(), Server: r.ID.Server, URI: r.Resource.URI, Name: r.Resource.Name,
			Title: r.Resource.Title, Description: r.Resource.Description, MIMEType: r.Resource.MIMEType, Size: r.Resource.Size,
		})
	}
	return out
}

// Templates returns every resource template, sorted by canonical ID.
func (h *Host) Templates() []Template {
	snap := h.snapshot()
	out := make([]Template, 0, len(snap.Templates()))
	for _, t := range snap.Templates() {
		out = append(out, Template{
			ID: t.ID.String(), Server: t.ID.Server, URITemplate: t.Template.URITemplate, Name: t.Template.Name,
			Title: t.Template.Title, Description: t.Template.Description, MIMEType: t.Template.MIMEType,
		})
	}
	return out
}

// ReadResource reads "<server>:<uri>". The URI need not be listed: a URI
// filled in from one of the server's templates is read the same way.
func (h *Host) ReadResource(ctx context.Context, id string) (*ResourceResult, error) {
	snap := h.snapshot()
	rid, ok := snap.Resolve(id)
	if !ok {
		return nil, h.unknownServer(id)
	}
	conn, err := h.conn(rid.Server)
	if err != nil {
		return nil, err
	}
	res, err := conn.ReadResource(ctx, rid.Name)
	if err != nil {
		return nil, err
	}
	return &ResourceResult{ID: rid.String(), Result: res, Text: content.ResourceText(res)}, nil
}

// unknownServer reports a resource ID that names no configured server.
func (h *Host) unknownServer(id string) error {
	msg := fmt.Sprintf("resource ID %q names no configured server; resource IDs are \"<server>:<uri>\"", id)
	server, _, _ := strings.Cut(id, ":")
	if s := registry.Suggest(server, h.cfg.Names()); s != "" {
		msg += fmt.Sprintf("; did you mean server %q?", s)
	}
	return fault.New(fault.CodeNotFound, "", "", errors.New(msg))
}

// Prompts returns every prompt, sorted by canonical ID.
func (h *Host) Prompts() []Prompt {
	snap := h.snapshot()
	out := make([]Prompt, 0, len(snap.Prompts()))
	for _, p := range snap.Prompts() {
		out = append(out, Prompt{
			ID: p.ID.String(), ModelName: p.Name, Server: p.ID.Server, Name: p.Prompt.Name, Title: p.Prompt.Title,
			Description: p.Prompt.Description, Arguments: p.Prompt.Arguments,
		})
	}
	return out
}

// GetPrompt renders a prompt, by canonical ID ("<server>:<prompt>") or
// model-facing name, with the given arguments. opts (may be nil) carries a
// Peer and input responses as for Call; Progress is not used.
func (h *Host) GetPrompt(ctx context.Context, id string, args map[string]string, opts *CallOptions) (*PromptResult, error) {
	snap := h.snapshot()
	p, ok := snap.Prompt(id)
	if !ok {
		if pid, ok := snap.Resolve(id); ok {
			if err := h.serverUnavailable(pid.Server); err != nil {
				return nil, err
			}
		}
		msg := fmt.Sprintf("no prompt %q", id)
		if s := registry.Suggest(id, snap.PromptNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, fault.New(fault.CodeNotFound, "", "", errors.New(msg))
	}
	conn, err := h.conn(p.ID.Server)
	if err != nil {
		return nil, err
	}
	uopts, ctx := callOptions(ctx, opts)
	res, err := conn.GetPrompt(ctx, p.ID.Name, args, uopts)
	if err != nil {
		return nil, err
	}
	cleanPrompt(res)
	return &PromptResult{ID: p.ID.String(), Result: res, Text: content.PromptText(res)}, nil
}

// Complete asks the server behind a completion reference for argument
// completions. A prompt reference names a prompt by model-facing name or
// canonical ID; a resource reference names a template, routed to the server
// that offers it (the first in server-name order).
func (h *Host) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil || params.Ref == nil {
		return nil, fault.New(fault.CodeInvalidInput, "", "complete", errors.New("no reference"))
	}
	snap := h.snapshot()
	ref := *params.Ref
	server := ""
	switch ref.Type {
	case "ref/prompt":
		p, ok := snap.Prompt(ref.Name)
		if !ok {
			return nil, fault.New(fault.CodeNotFound, "", "complete", fmt.Errorf("no prompt %q", ref.Name))
		}
		server, ref.Name = p.ID.Server, p.Prompt.Name
	case "ref/resource":
		for _, t := range snap.Templates() {
			if t.Template.URITemplate == ref.URI {
				server = t.ID.Server
				break
			}
		}
		if server == "" {
			return nil, fault.New(fault.CodeNotFound, "", "complete", fmt.Errorf("no resource template %q", ref.URI))
		}
	default:
		return nil, fault.New(fault.CodeInvalidInput, "", "complete", fmt.Errorf("unknown reference type %q", ref.Type))
	}
	conn, err := h.conn(server)
	if err != nil {
		return nil, err
	}
	p := *params
	p.Ref = &ref
	return conn.Complete(ctx, &p)
}

// Subscribe subscribes to updates of a resource URI at the server that
// lists it (or, for a URI filled in from a template, the server offering a
// template, tried in server-name order). Unsubscribe undoes it.
func (h *Host) Subscribe(ctx context.Context, uri string) (server string, err error) {
	server, err = h.resourceServer(uri)
	if err != nil {
		return "", err
	}
	conn, err := h.conn(server)
	if err != nil {
		return "", err
	}
	return server, conn.Subscribe(ctx, uri)
}

// Unsubscribe ends a subscription made with Subscribe at server.
func (h *Host) Unsubscribe(ctx context.Context, server, uri string) error {
	conn, err := h.conn(server)
	if err != nil {
		return err
	}
	return conn.Unsubscribe(ctx, uri)
}

// resourceServer finds the server of a resource URI.
func (h *Host) resourceServer(uri string) (string, error) {
	snap := h.snapshot()
	for _, r := range snap.Resources() {
		if r.Resource.URI == uri {
			return r.ID.Server, nil
		}
	}
	for _, t := range snap.Templates() {
		if templatePrefixMatch(t.Template.URITemplate, uri) {
			return t.ID.Server, nil
		}
	}
	return "", fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server offers resource %q", uri))
}

// templatePrefixMatch is a conservative match of a URI against an RFC 6570
// template: the literal text before the first expression must prefix it.
func templatePrefixMatch(tmpl, uri string) bool {
	lit, _, _ := strings.Cut(tmpl, "{")
	return lit != "" && strings.HasPrefix(uri, lit)
}

// Close closes every connection and stops every server process, waiting
// for the bounded teardown. It is safe to call more than once.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.stop)
	var conns []*upstream.Conn
	for _, s := range h.servers {
		if s.conn != nil {
			conns = append(conns, s.conn)
			s.state = StateClosed
		}
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	h.watchers.Wait()
	return errors.Join(errs...)
}
