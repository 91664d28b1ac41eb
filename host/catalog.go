package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

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

	// StateHeld: the server's launch differs from the one a person
	// approved, or was never approved (security.onLaunchChange "hold");
	// it is not started until `switchboard approve SERVER` (see
	// docs/PINS.md).
	StateHeld State = "held"
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
	// LaunchHeld is "new" or "changed" while the server is held because
	// its launch was never approved or changed since, "unlocked" or
	// "lockfile" while the lockfile it is served under (serve --lock)
	// does not name it or pins another launch (State is "held").
	LaunchHeld string `json:"launchHeld,omitempty"`
	// Sandbox says how a stdio server is confined; nil for the others.
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
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
	// Deferred is set (by [Host.Tools]) on a tool that [View.Tools]
	// leaves out until a tool_search finds it (config:
	// context.deferTools).
	Deferred bool `json:"deferred,omitempty"`
	// Held is set (by Search) on a tool held for review (HeldStatus):
	// only its names and server are given, never its definition.
	Held bool `json:"held,omitempty"`
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
			st.Auth = oauth.NeedsLoginState(sc.Name)
		} else if v.err == nil {
			st.Auth = oauth.StoredAuth(h.opts.OAuth, sc)
		}
		if v.vetted != nil {
			st.Findings = append(st.Findings, v.vetted.Findings...)
		}
		st.Held = v.held
		st.HeldInjection = v.injHeld
		st.LaunchHeld = v.launch
		st.Findings = append(st.Findings, v.flags...)
		if f, ok := launchFinding(sc.Name, v); ok {
			st.Findings = append(st.Findings, f)
		}
		st.Sandbox = sandboxStatus(sc, &v)
		st.Findings = append(st.Findings, sandboxFindings(sc.Name, st.Sandbox)...)
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
// deferred ones included (and marked). What to give a model is a view's:
// [View.Tools], or [View.ProviderTools] in a provider's format; the
// operator's is h.View(Caller{}).
func (h *Host) Tools() []Tool {
	snap, cfg := h.snapshot(), h.config()
	out := make([]Tool, 0, len(snap.Tools()))
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, t := range snap.Tools() {
		tool := toolOf(t)
		tool.Deferred = h.deferredLocked(cfg, t, h.found[""], false)
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

// tool describes one tool, by model-facing name or canonical ID, or a
// built-in tool that is on in the operator's view.
func (h *Host) tool(name string) (Tool, error) {
	if b := h.lookupBuiltin(h.View(Caller{}), name); b != nil {
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
