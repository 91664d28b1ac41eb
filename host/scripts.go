package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Stored scripts (context.codeMode.scripts): each is the built-in tool
// script__NAME, run as code_run runs a script, its arguments in the
// script's global args. A stored script is pinned like a tool definition:
// its canonical definition (name, description, source) is pinned in the
// store at its first run, and once it differs from its pin it is held,
// each call refused with definition_changed, until a person approves it
// (`switchboard approve 'code mode:NAME'`, or the status page). Without a
// store (an ephemeral host) nothing is pinned.

// ScriptPrefix begins the name of a stored script's tool.
const ScriptPrefix = "script__"

// scriptsKey is the store's server key of stored scripts' pins and held
// changes. It has a space, which no server name has, so it never meets a
// server's pins.
const scriptsKey = "code mode"

// isScriptTool reports whether a built-in's name is a script run: code_run
// or a stored script, whose rows and whose calls' rows carry a run's ID.
func isScriptTool(name string) bool {
	return name == CodeTool || strings.HasPrefix(name, ScriptPrefix)
}

// storedScripts returns the stored scripts as built-in tools, while code
// mode is on.
func (h *Host) storedScripts() []*builtin {
	cm := h.config().Context.CodeMode
	if !cm.Enabled {
		return nil
	}
	out := make([]*builtin, 0, len(cm.Scripts))
	for _, s := range cm.Scripts {
		desc := s.Description
		if desc == "" {
			desc = "A stored script."
		}
		out = append(out, &builtin{
			tool: Tool{Name: ScriptPrefix + s.Name, ID: ScriptPrefix + s.Name, Title: s.Name,
				Description: desc + " (A stored script: its calls are made as yours.)",
				InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: &mcp.ToolAnnotations{Title: s.Name, OpenWorldHint: new(true)}},
			run: func(v *View, ctx context.Context, args json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
				return v.runStored(ctx, s, args, opts)
			},
		})
	}
	return out
}

// scriptDefinition is what a stored script's pin holds.
func scriptDefinition(s config.StoredScript) []byte {
	b, _ := json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Script      string `json:"script"`
	}{s.Name, s.Description, s.Script})
	return b
}

// runStored runs a stored script once its definition is the one pinned.
func (v *View) runStored(ctx context.Context, s config.StoredScript, args json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	if err := v.h.checkScriptPin(ctx, s); err != nil {
		return nil, err
	}
	// The arguments are a JSON object (callBuiltin checked it), which is
	// a JavaScript expression.
	return v.runScript(ctx, "const args = "+string(args)+";\n"+s.Script, opts)
}

// checkScriptPin pins a stored script at its first run and refuses it,
// holding the change for review, while it differs from its pin.
func (h *Host) checkScriptPin(ctx context.Context, s config.StoredScript) error {
	if h.store == nil {
		return nil
	}
	def := scriptDefinition(s)
	hash := drift.Hash(def)
	pctx, cancel := context.WithTimeout(ctx, auditPutTimeout)
	defer cancel()
	pins, err := h.store.Pins(pctx, scriptsKey)
	h.storeReached(err)
	if err != nil {
		return fault.New(fault.CodeUnavailable, "", ScriptPrefix+s.Name, fmt.Errorf("the state store holding the script's pin: %w", err))
	}
	for _, p := range pins {
		if p.Tool != s.Name {
			continue
		}
		if p.Hash == hash {
			return nil
		}
		if err := h.store.SaveDrift(pctx, store.Drift{Server: scriptsKey, Tool: s.Name, Hash: hash, Definition: def}); err != nil {
			h.log.Warn("held script not saved", "script", s.Name, "err", err)
		}
		return fault.New(fault.CodeDefinitionChanged, "", ScriptPrefix+s.Name,
			errors.New("the stored script changed since it was approved; it is held for review until a person approves it"))
	}
	// Its first run: trusted on first use, as a tool's first listing is.
	return h.store.Pin(pctx, store.Pin{Server: scriptsKey, Tool: s.Name, Hash: hash, Definition: def})
}
