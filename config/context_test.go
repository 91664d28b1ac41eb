package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestContextParse: the "context" block and the per-server "deferTools"
// are parsed strictly and resolve as documented.
func TestContextParse(t *testing.T) {
	tr, fa := true, false
	tests := []struct {
		name      string
		src       string
		want      Context
		spill     int
		deferred  map[string]bool
		serverSet map[string]*bool
	}{
		{"absent: defaults", `{"mcpServers": {"a": {"command": "x"}}}`, Context{}, DefaultSpillBytes,
			map[string]bool{"a": false}, map[string]*bool{"a": nil}},
		{"everything set",
			`{"context": {"capabilityTools": false, "deferTools": true, "alwaysInclude": ["gh__*", "fs__read_file"], "spillBytes": 8192, "outputSchemaHint": true, "toolsShare": 0.02},
			  "mcpServers": {"a": {"command": "x"}, "b": {"command": "x", "deferTools": false}}}`,
			Context{NoCapabilityTools: true, DeferTools: true, AlwaysInclude: []string{"gh__*", "fs__read_file"}, SpillBytes: 8192, OutputSchemaHint: true, ToolsShare: 0.02},
			8192, map[string]bool{"a": true, "b": false}, map[string]*bool{"a": nil, "b": &fa}},
		{"code mode",
			`{"context": {"codeMode": {"enabled": true, "memoryMB": 64, "cpuMs": 500, "wallMs": 10000, "calls": 20, "outputBytes": 4096, "concurrent": 2}}, "mcpServers": {"a": {"command": "x"}}}`,
			Context{CodeMode: CodeMode{Enabled: true, MemoryMB: 64, CPUMs: 500, WallMs: 10000, Calls: 20, OutputBytes: 4096, Concurrent: 2}},
			DefaultSpillBytes, map[string]bool{"a": false}, map[string]*bool{"a": nil}},
		{"stored scripts",
			`{"context": {"codeMode": {"enabled": true, "scripts": {"z-last": {"script": "return 2"}, "report": {"description": "The report.", "script": "return 1"}}}}, "mcpServers": {"a": {"command": "x"}}}`,
			Context{CodeMode: CodeMode{Enabled: true, Scripts: []StoredScript{{Name: "report", Description: "The report.", Script: "return 1"}, {Name: "z-last", Script: "return 2"}}}},
			DefaultSpillBytes, map[string]bool{"a": false}, map[string]*bool{"a": nil}},
		{"spill off, one server deferred",
			`{"context": {"spill": false}, "mcpServers": {"a": {"command": "x", "deferTools": true}, "b": {"command": "x"}}}`,
			Context{NoSpill: true}, 0, map[string]bool{"a": true, "b": false}, map[string]*bool{"a": &tr, "b": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), testFile, fakeEnv{}.opts())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Context); diff != "" {
				t.Errorf("Context (-want +got):\n%s", diff)
			}
			if got := cfg.Context.Spill(); got != tt.spill {
				t.Errorf("Spill() = %d, want %d", got, tt.spill)
			}
			for name, want := range tt.deferred {
				s := cfg.Server(name)
				if got := cfg.Context.Deferred(s); got != want {
					t.Errorf("Deferred(%s) = %v, want %v", name, got, want)
				}
				if diff := cmp.Diff(tt.serverSet[name], s.DeferTools); diff != "" {
					t.Errorf("%s.DeferTools (-want +got):\n%s", name, diff)
				}
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestContextParseErrors(t *testing.T) {
	const F = testFile + ": "
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"unknown field", `{"mcpServers": {}, "context": {"deferTool": true}}`,
			F + `$.context.deferTool: unknown field "deferTool" (did you mean "deferTools"?)`},
		{"not an object", `{"mcpServers": {}, "context": []}`,
			F + `$.context: want object, got array`},
		{"spill too small", `{"mcpServers": {}, "context": {"spillBytes": 10}}`,
			F + `$.context.spillBytes: must be between 4096 and 67108864`},
		{"bad glob", `{"mcpServers": {}, "context": {"alwaysInclude": ["[x"]}}`,
			F + `$.context.alwaysInclude[0]: invalid glob "[x": syntax error in pattern`},
		{"code mode unknown field", `{"mcpServers": {}, "context": {"codeMode": {"enable": true}}}`,
			F + `$.context.codeMode.enable: unknown field "enable" (did you mean "enabled"?)`},
		{"code mode memory", `{"mcpServers": {}, "context": {"codeMode": {"memoryMB": 0}}}`,
			F + `$.context.codeMode.memoryMB: must be between 1 and 1024`},
		{"script name", `{"mcpServers": {}, "context": {"codeMode": {"scripts": {"a b": {"script": "return 1"}}}}}`,
			F + `$.context.codeMode.scripts["a b"]: script name "a b": want 1 to 56 letters, digits, '_' or '-'`},
		{"script without source", `{"mcpServers": {}, "context": {"codeMode": {"scripts": {"x": {"description": "d"}}}}}`,
			F + `$.context.codeMode.scripts.x.script: a stored script needs its source`},
		{"toolsShare too large", `{"mcpServers": {}, "context": {"toolsShare": 2}}`,
			F + `$.context.toolsShare: must be between 0.001 and 0.5`},
		{"contextWindow too small", `{"mcpServers": {}, "profiles": {"p": {"contextWindow": 10}}}`,
			F + `$.profiles.p.contextWindow: must be between 1000 and 100000000`},
		{"deferTools type", srv(`"command": "x", "deferTools": "yes"`),
			F + `$.mcpServers.a.deferTools: want boolean, got string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseErr(t, tt.src, fakeEnv{})); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContextValidate: a hand-built Config's context is checked too.
func TestContextValidate(t *testing.T) {
	cfg := &Config{Context: Context{SpillBytes: 1, AlwaysInclude: []string{"[x"}, ToolsShare: 0.9},
		Clients: []*Client{{Name: "c", ContextWindow: 5}}}
	err := cfg.Validate()
	for _, want := range []string{"$.context.spillBytes: must be between", `$.context.alwaysInclude[0]: invalid glob "[x"`,
		"$.context.toolsShare: must be between", "$.clients.c.contextWindow: must be between"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to contain %q", err, want)
		}
	}
}
