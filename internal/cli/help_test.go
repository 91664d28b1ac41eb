package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelp: `help COMMAND` and `COMMAND --help` print the command's usage,
// an example and its flags on stdout; an unknown command is a usage error
// with a suggestion.
func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // substrings of stdout, in this order
		wantErr  string   // substring of stderr
	}{
		{"help", []string{"help"}, 0, []string{"Commands:", "switchboard help COMMAND"}, ""},
		{"help tools", []string{"help", "tools"}, 0, []string{"Usage: switchboard tools [flags] [NAME", "Examples:\n  switchboard tools\n", "Flags:", "-raw"}, ""},
		{"tools --help", []string{"tools", "--help"}, 0, []string{"Usage: switchboard tools", "Examples:", "switchboard tools demo__echo\n", "-format"}, ""},
		{"help call", []string{"help", "call"}, 0, []string{"Usage: switchboard call", "switchboard call demo__echo text=hello", "-yes"}, ""},
		{"help log", []string{"help", "log"}, 0, []string{"Usage: switchboard log", "switchboard log demo:echo -n 10", "-n N"}, ""},
		{"help serve", []string{"help", "serve"}, 0, []string{"Usage: switchboard serve", "switchboard serve --stdio", "-token-env"}, ""},
		{"flag before help", []string{"--help", "approve"}, 0, []string{"Usage: switchboard approve", "switchboard approve demo:echo"}, ""},
		{"help help", []string{"help", "help"}, 0, []string{"Commands:"}, ""},
		{"help unknown", []string{"help", "tool"}, 2, nil, `unknown command "tool" (did you mean "tools"?)`},
		{"help misspelt", []string{"help", "aprove"}, 2, nil, `(did you mean "approve"?)`},
		{"help nothing near", []string{"help", "zzzzzz"}, 2, nil, `unknown command "zzzzzz"; run 'switchboard help'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("switchboard %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, r.code, tt.wantCode, r.stdout, r.stderr)
			}
			rest := r.stdout
			for _, w := range tt.wantOut {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("switchboard %q: stdout lacks %q (in order)\nstdout: %s", tt.args, w, r.stdout)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestEveryCommandHasExample: the help of every command in the usage
// shows at least one example of it.
func TestEveryCommandHasExample(t *testing.T) {
	t.Parallel()
	r := run(t, "help")
	_, list, _ := strings.Cut(r.stdout, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		h := run(t, "help", name)
		_, ex, ok := strings.Cut(h.stdout, "Examples:\n")
		if h.code != 0 || !ok || !strings.HasPrefix(ex, "  switchboard "+name) {
			t.Errorf("help %s: exit %d, no example of it:\n%s", name, h.code, h.stdout)
		}
	}
}

// TestHelpTidy: a flag before help is not taken for the command; a
// one-letter flag is shown as itself, and no flag line carries a phrase
// of its usage as its argument; an unknown flag and an unknown server
// name get a suggestion.
func TestHelpTidy(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if r := run(t, "--home", home, "help"); r.code != 0 || !strings.Contains(r.stdout, "Commands:") {
		t.Errorf("--home DIR help: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "--home", home, "-v", "help", "tools"); r.code != 0 || !strings.Contains(r.stdout, "Usage: switchboard tools") {
		t.Errorf("--home DIR -v help tools: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for cmd, want := range map[string]string{"search": "\n  -k N ", "log": "\n  -n N ", "tools": "\n  -v "} {
		r := run(t, "help", cmd)
		if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, ", --") {
			t.Errorf("help %s: want %q and no \", --\":\n%s", cmd, want, r.stdout)
		}
	}
	if r := run(t, "help", "connect"); !strings.Contains(r.stdout, "\n      --stdio  ") {
		t.Errorf("help connect: the --stdio line is garbled:\n%s", r.stdout)
	}
	if r := run(t, "tools", "--rwa"); r.code != 2 || !strings.Contains(r.stderr, `unknown flag: --rwa (did you mean "--raw"?)`) {
		t.Errorf("tools --rwa: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "get", "dem"); r.code != 2 || !strings.Contains(r.stderr, `no server "dem"`) || !strings.Contains(r.stderr, `(did you mean "demo"?)`) {
		t.Errorf("get dem: exit %d\n%s", r.code, r.stderr)
	}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"github": map[string]any{"command": "true"}}})
	for _, cmd := range []string{"remove", "disable", "enable"} {
		if r := run(t, cmd, "githb", "--config", path); r.code != 2 || !strings.Contains(r.stderr, `no server "githb"`) || !strings.Contains(r.stderr, `(did you mean "github"?)`) {
			t.Errorf("%s githb: exit %d\n%s", cmd, r.code, r.stderr)
		}
	}
}

// TestAddJSONErrors: add-json says where its argument is not valid JSON,
// and blames a problem in it on the argument, with the path within it,
// never on config.json; nothing is written.
func TestAddJSONErrors(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, tc := range []struct{ arg, want string }{
		{`{"command": "true", "args": ["a",]}`, "the JSON argument is not valid JSON at line 1, column 34: invalid character ']'"},
		{"{\"command\": \"true\",\n \"args\": [1,\n  }", "the JSON argument is not valid JSON at line 3, column 3"},
		{`{"command": "true"`, "the JSON argument ends early"},
		{`{"comand": "true"}`, `the JSON argument: $.comand: unknown field "comand" (did you mean "command"?)`},
		{`{"command": "true", "env": {"A": 1}}`, "the JSON argument: $.env.A: want string, got number"},
	} {
		r := run(t, "add-json", "x", tc.arg, "--home", home)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "config.json") {
			t.Errorf("add-json x %s: exit %d\n%s\nwant %q", tc.arg, r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "config.json")); !os.IsNotExist(err) {
		t.Errorf("config.json written: %v", err)
	}
}

// TestStoreCommandsSuggestServers: approve, diff and log, which read the
// store, suggest the configured server a misspelt name meant.
func TestStoreCommandsSuggestServers(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"approve", "dem"}, {"diff", "dem:echo"}, {"log", "dem"}} {
		r := run(t, args...)
		if !strings.Contains(r.stdout+r.stderr, `(did you mean "demo"?)`) {
			t.Errorf("%q: exit %d, no suggestion\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := run(t, "approve", "demo:echo"); strings.Contains(r.stderr, "did you mean") {
		t.Errorf("approve demo:echo suggests: %s", r.stderr)
	}
}
