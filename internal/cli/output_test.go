package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// hiddenRune reports whether a terminal would hide or obey r: C0 controls
// but newline and tab, DEL, C1 controls, tag characters, bidi controls,
// zero-width characters and the BOM.
func hiddenRune(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r >= 0x7f && r <= 0x9f,
		r >= 0xe0000 && r <= 0xe007f,
		r >= 0x200b && r <= 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069,
		r == 0xfeff:
		return true
	}
	return false
}

// checkVisible fails t if s is not UTF-8 or holds a hidden character.
func checkVisible(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s is not valid UTF-8: %q", what, s)
		return
	}
	for i, r := range s {
		if hiddenRune(r) {
			t.Errorf("%s holds %U at byte %d: %q", what, r, i, s[max(0, i-40):min(len(s), i+40)])
			return
		}
	}
}

// TestHiddenCharactersEscaped runs the commands that print what a hostile
// server sent (its smuggler tool's description and result hold tag
// characters, zero-width and bidi characters, ESC, C0 and C1 controls) and
// checks that none of those characters reaches stdout or stderr, in text
// and in --json, which stays valid JSON.
func TestHiddenCharactersEscaped(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"h": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModeUnicode)},
	}})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // substrings of stdout
	}{
		{"tools --raw", []string{"tools", "h:smuggler", "--raw"}, 0, []string{`\u{e0041}\u{e0054}\u{e0054}`, `\u200b\u200c\u200d\u2060`, `\u202e`, `\u001b[31mRED`}},
		{"tools --raw --json", []string{"tools", "h:smuggler", "--raw", "--json"}, 0, []string{`\udb40\udc41\udb40\udc54`, `\u200b\u200c\u200d\u2060`, `\u001b[31mRED`}},
		{"tools describe", []string{"tools", "h:smuggler"}, 0, []string{"Formats text."}},
		{"tools describe --json", []string{"tools", "h:smuggler", "--json"}, 0, []string{"Formats text."}},
		{"tools", []string{"tools"}, 0, []string{"smuggler"}},
		{"tools --json", []string{"tools", "--json"}, 0, []string{"smuggler"}},
		{"tools --format", []string{"tools", "--format", "openai"}, 0, []string{"smuggler"}},
		{"call", []string{"call", "h:smuggler"}, 0, []string{`\u{e0041}\u{e0054}`, `\x1b[31mRED`, `\u202e`, `safe\x0dEVIL`}},
		{"call --json", []string{"call", "h:smuggler", "--json"}, 0, []string{`\udb40\udc41\udb40\udc54`, `\u001b[31mRED`, `\u202e`}},
		{"prompt", []string{"prompt", "h:greet"}, 0, []string{"Hello!"}},
		{"prompt --json", []string{"prompt", "h:greet", "--json"}, 0, []string{"Hello!"}},
		{"prompts", []string{"prompts"}, 0, []string{"h:greet"}},
		{"servers -v", []string{"servers", "-v"}, 0, []string{"Hostile test server"}},
		{"servers --json", []string{"servers", "--json", "-v"}, 0, []string{"Hostile test server"}},
		{"unknown name", []string{"tools", "h:evil\u200btool"}, 2, nil},
		{"unknown name --json", []string{"tools", "h:evil\u200btool", "--json"}, 2, []string{`evil\\u200btool`}}, // quoted by the message, then as JSON
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, append(tt.args, "--config", path)...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %q\nstderr: %q", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %s: %q", want, r.stdout)
				}
			}
			checkVisible(t, "stdout", r.stdout)
			checkVisible(t, "stderr", r.stderr)
			if slices.Contains(tt.args, "--json") || slices.Contains(tt.args, "--format") {
				if !json.Valid([]byte(r.stdout)) {
					t.Errorf("stdout is not JSON: %q", r.stdout)
				}
			}
		})
	}
}

// TestJSONErrors: with --json a failure is one JSON object on stdout with
// the fault code (or usage, config), the message, the server and whether
// to retry, and the exit code is the one without --json.
func TestJSONErrors(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"good":   map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
		"broken": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeExit)},
	}})
	bad := writeConfig(t, map[string]any{"mcpServers": map[string]any{"x": map[string]any{"comand": "y"}}})
	type failure struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Server    string `json:"server"`
		Retryable bool   `json:"retryable"`
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     failure // Message: a substring
	}{
		{"unknown tool", []string{"call", "good__ecoh", "--config", path}, 2, failure{"not_found", `did you mean "good__echo"`, "", false}},
		{"unknown tool, described", []string{"tools", "good__ecoh", "--config", path}, 2, failure{"not_found", `good__ecoh`, "", false}},
		{"unavailable server", []string{"call", "broken:echo", "--config", path}, 3, failure{"unavailable", "unavailable", "broken", true}},
		{"crash mid-call", []string{"call", "good__crash", "--config", path}, 3, failure{"unknown_outcome", "unknown_outcome", "good", false}},
		{"config error", []string{"tools", "--config", bad}, 2, failure{"config", `$.mcpServers.x.comand`, "", false}},
		{"missing config file", []string{"servers", "--config", filepath.Join(t.TempDir(), "missing.json")}, 2, failure{"config", "missing.json", "", false}},
		{"unknown command", []string{"tool"}, 2, failure{"usage", `did you mean "tools"`, "", false}},
		{"bad flag", []string{"tools", "--bogus"}, 2, failure{"usage", "bogus", "", false}},
		{"too many args", []string{"read", "a", "b"}, 2, failure{"usage", "usage: switchboard read", "", false}},
		{"bad argument", []string{"call", "demo__echo", "text"}, 2, failure{"usage", "not key=value", "", false}},
		{"nothing to approve", []string{"approve", "demo:echo"}, 2, failure{"not_found", "nothing to approve", "", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, append(tt.args, "--json")...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d", r.code, tt.wantCode)
			}
			var got struct {
				Error *failure `json:"error"`
			}
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil || got.Error == nil || dec.More() {
				t.Fatalf("stdout is not one {\"error\":{...}} object (%v)\nstdout: %q\nstderr: %q", err, r.stdout, r.stderr)
			}
			var keys map[string]map[string]any
			json.Unmarshal([]byte(r.stdout), &keys)
			for _, k := range []string{"code", "message", "server", "retryable"} {
				if _, ok := keys["error"][k]; !ok {
					t.Errorf("error lacks %q: %s", k, r.stdout)
				}
			}
			e := *got.Error
			if e.Code != tt.want.Code || !strings.Contains(e.Message, tt.want.Message) || e.Server != tt.want.Server || e.Retryable != tt.want.Retryable {
				t.Errorf("error = %+v, want %+v (message a substring)", e, tt.want)
			}
			if strings.Contains(r.stderr, "switchboard: ") {
				t.Errorf("stderr repeats the failure as text: %q", r.stderr)
			}
		})
	}
}

// TestLogJSON: log --json uses the keys and units of the other commands'
// JSON: camelCase, durations in milliseconds.
func TestLogJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if r := run(t, "call", "demo__echo", "text=hi", "--home", home); r.code != 0 {
		t.Fatalf("call: exit %d, stderr %s", r.code, r.stderr)
	}
	r := run(t, "log", "--json", "--home", home)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); r.code != 0 || err != nil || len(rows) != 1 {
		t.Fatalf("log --json: exit %d, %v, %d rows\nstdout: %s\nstderr: %s", r.code, err, len(rows), r.stdout, r.stderr)
	}
	row := rows[0]
	var keys []string
	for k := range row {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"argShape", "bytesIn", "bytesOut", "id", "latencyMs", "outcome", "server", "time", "tool"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if ms, ok := row["latencyMs"].(float64); !ok || ms < 0 || ms > 60_000 {
		t.Errorf("latencyMs = %v, want milliseconds", row["latencyMs"])
	}
	if row["tool"] != "demo:echo" || row["outcome"] != "ok" {
		t.Errorf("row = %v", row)
	}
	r = run(t, "log", "--json", "--home", t.TempDir())
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("empty log --json: exit %d, stdout %q", r.code, r.stdout)
	}
	if bytes.Contains([]byte(r.stderr), []byte("switchboard:")) {
		t.Errorf("stderr: %s", r.stderr)
	}
}
