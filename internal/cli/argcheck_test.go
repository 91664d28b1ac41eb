package cli_test

import (
	"os"
	"strings"
	"testing"
)

// TestCallChecksArguments: arguments, key=value or JSON, are checked
// against the tool's input schema before the call is sent; a wrong type,
// a missing required argument and an argument a closed schema does not
// list exit 2 and name the argument. An argument an open schema does not
// list, and a schema that cannot be resolved, are warnings: the call is
// made.
func TestCallChecksArguments(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": exe, "args": []string{"demo-server"}},
		"kit":  map[string]any{"command": exe, "env": map[string]string{journalVar: t.TempDir() + "/journal"}},
	}})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string // substring of stdout
		wantErr  string // substring of stderr
	}{
		{"number from key=value", []string{"demo__add", "a=abc", "b=2"}, 2, "", `a: expected number, got "abc"`},
		{"number from JSON", []string{"demo__add", `{"a":"2","b":2}`}, 2, "", `a: expected number, got "2"`},
		{"string from JSON", []string{"demo__echo", `{"text":5}`}, 2, "", "text: expected string, got 5"},
		{"integer", []string{"demo__slow", "steps=1.5"}, 2, "", "steps: expected integer, got 1.5"},
		{"missing required", []string{"demo__add", "a=1"}, 2, "", "b: required, missing"},
		{"no arguments, one required", []string{"demo__echo"}, 2, "", "text: required, missing"},
		{"all at once", []string{"demo__add", `{"a":true,"c":1}`}, 2, "", "a: expected number, got true; c: not an argument of this tool (it takes: a, b); b: required, missing"},
		{"unknown key, closed schema", []string{"demo__echo", "text=hi", "txet=hi"}, 2, "", "txet: not an argument of this tool (it takes: text)"},
		{"unknown key, stdin", []string{"demo__weather", "-"}, 2, "", "text: not an argument of this tool (it takes: city, units)"},
		{"json failure", []string{"demo__add", "a=x", "b=1", "--json"}, 2, `"code": "invalid_input"`, ""},
		{"names the schema command", []string{"demo__add", "a=x", "b=1"}, 2, "", "'switchboard tools demo__add' shows the schema"},
		{"valid", []string{"demo__add", "a=2", "b=40"}, 0, `{"sum":42}`, ""},
		{"integer is a number", []string{"demo__add", `{"a":2,"b":0.5}`}, 0, `{"sum":2.5}`, ""},
		{"unknown key, open schema", []string{"kit__open", "head=1", "tail=2"}, 0, `"tail":2`, "warning: kit__open: tail: not an argument of this tool (it takes: head); sent anyway"},
		{"open schema still typed", []string{"kit__open", `{"head":"abc"}`}, 2, "", `head: expected number, got "abc"`},
		{"unresolvable schema", []string{"kit__unresolvable", "x=1"}, 0, `"x":1`, "input schema cannot be resolved"},
		{"unknown draft", []string{"kit__draft4", `{"x":1}`}, 0, `"x":1`, "the arguments go unchecked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, append([]string{"call", "--config", path}, tt.args...)...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.wantOut) || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("switchboard call %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, r.code, tt.wantCode, r.stdout, r.stderr)
			}
		})
	}
}
