package cli_test

import (
	"strings"
	"testing"
)

// TestHelp: `help COMMAND` and `COMMAND --help` print the command's usage,
// an example and its flags on stdout; an unknown command is a usage error
// with a suggestion.
func TestHelp(t *testing.T) {
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
