package config

import (
	"fmt"
	"slices"
	"strings"
)

// CodeMode configures code mode ("context.codeMode"): the built-in tool
// code_run, which runs a model's short JavaScript program that calls the
// tools of its caller's view. Its zero value is the default: off. A zero
// limit means the sandbox's default (docs/CODEMODE.md).
type CodeMode struct {
	// Enabled offers code_run ("enabled"); off by default.
	Enabled bool
	// MemoryMB caps a run's memory ("memoryMB", 1 to 1024; default 32).
	MemoryMB int
	// CPUMs caps the JavaScript time of a run ("cpuMs", 10 to 600000;
	// default 2000).
	CPUMs int
	// WallMs caps a run, tool calls included ("wallMs", 100 to 3600000;
	// default 60000).
	WallMs int
	// Calls caps the tool calls of a run ("calls", 1 to 10000; default
	// 100).
	Calls int
	// OutputBytes caps a run's returned value as JSON ("outputBytes", 256
	// to 16777216; default 65536).
	OutputBytes int
	// Concurrent caps the runs in progress at once in the host
	// ("concurrent", 1 to 256; default 4); more wait, within their wall
	// time.
	Concurrent int
	// Scripts are the stored scripts ("scripts": {NAME: {"description",
	// "script"}}), sorted by name: each is offered as the built-in tool
	// script__NAME and run as code_run runs a script, its arguments in
	// the global args. Each is pinned by its hash at its first run and
	// held for review when it changes.
	Scripts []StoredScript
}

// StoredScript is one stored script.
type StoredScript struct {
	// Name is its name: 1 to 56 letters, digits, '_' or '-'.
	Name string
	// Description says what it does and which arguments it takes.
	Description string
	// Script is its source: the body of an async function.
	Script string
}

// maxScriptName keeps script__NAME within a model-facing name's 64 bytes.
const maxScriptName = 56

// codeModeFields are the JSON keys of "codeMode".
var codeModeFields = []string{"enabled", "memoryMB", "cpuMs", "wallMs", "calls", "outputBytes", "concurrent", "scripts"}

// storedScriptFields are the JSON keys of a stored script.
var storedScriptFields = []string{"description", "script"}

// decodeCodeMode decodes "context.codeMode".
func (d *decoder) decodeCodeMode(n *node, p *jsonPath) CodeMode {
	var c CodeMode
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return c
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "enabled":
			c.Enabled, _ = d.boolean(m.val, fp, "")
		case "memoryMB":
			c.MemoryMB, _ = d.integer(m.val, fp, "", 1, 1024)
		case "cpuMs":
			c.CPUMs, _ = d.integer(m.val, fp, "", 10, 600000)
		case "wallMs":
			c.WallMs, _ = d.integer(m.val, fp, "", 100, 3600000)
		case "calls":
			c.Calls, _ = d.integer(m.val, fp, "", 1, 10000)
		case "outputBytes":
			c.OutputBytes, _ = d.integer(m.val, fp, "", 256, 16<<20)
		case "concurrent":
			c.Concurrent, _ = d.integer(m.val, fp, "", 1, 256)
		case "scripts":
			c.Scripts = d.decodeScripts(m.val, fp)
		default:
			d.unknown(fp, m.key, codeModeFields, nil, "")
		}
	}
	return c
}

// decodeScripts decodes "codeMode.scripts".
func (d *decoder) decodeScripts(n *node, p *jsonPath) []StoredScript {
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return nil
	}
	var out []StoredScript
	for _, m := range n.members {
		fp := p.k(m.key)
		if !identName.MatchString(m.key) || len(m.key) > maxScriptName {
			d.add(fp, "", fmt.Sprintf("script name %s: want 1 to %d letters, digits, '_' or '-'", quote(m.key), maxScriptName), nil)
			continue
		}
		if m.val.kind != kindObject {
			d.wrongType(m.val, fp, "", "object")
			continue
		}
		s := StoredScript{Name: m.key}
		for _, f := range m.val.members {
			ffp := fp.k(f.key)
			switch f.key {
			case "description":
				s.Description, _ = d.str(f.val, ffp, "")
			case "script":
				s.Script, _ = d.str(f.val, ffp, "")
			default:
				d.unknown(ffp, f.key, storedScriptFields, nil, "")
			}
		}
		if strings.TrimSpace(s.Script) == "" {
			d.add(fp.k("script"), "", "a stored script needs its source", nil)
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b StoredScript) int { return strings.Compare(a.Name, b.Name) })
	return out
}
