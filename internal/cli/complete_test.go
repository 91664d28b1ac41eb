package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// completionHome is a real home: a configuration with the demo server
// ("docs") and a sleeper that counts its starts in mark, catalogues saved
// by one `tools --refresh` (which waits for every server), and a working
// directory whose project file has "proj".
func completionHome(t *testing.T) (home, dir, mark string) {
	t.Helper()
	exe, _ := os.Executable()
	home, dir = t.TempDir(), t.TempDir()
	mark = filepath.Join(t.TempDir(), "starts")
	env := testkit.ChildEnv(testkit.ModeSleeper)
	env[testkit.MarkVar] = mark
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"docs":   map[string]any{"command": exe, "args": []string{"demo-server"}},
		"sleepy": map[string]any{"command": exe, "env": env},
	}})
	if err := os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	writeProject(t, dir, map[string]any{"mcpServers": map[string]any{"proj": map[string]any{"command": "proj-server"}}})
	if r := runIn(t, dir, home, "tools", "--refresh"); r.code != 0 || !strings.Contains(r.stdout, "docs__echo") {
		t.Fatalf("tools: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return home, dir, mark
}

// TestCompletion drives cobra's __complete, as the shells' scripts do:
// commands, flags, fixed flag values, server names from the configuration
// and the project file, and tool names from the saved catalogues, without
// starting any server.
func TestCompletion(t *testing.T) {
	t.Parallel()
	home, dir, mark := completionHome(t)
	before := starts(t, mark)
	tests := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{""}, []string{"tools\t", "completion\t", "add\t", "help\t"}, []string{"conformance-fixture", "__complete"}},
		{[]string{"se"}, []string{"servers\t", "search\t", "serve\t"}, []string{"tools\t"}},
		{[]string{"get", ""}, []string{"docs", "sleepy", "proj"}, []string{"docs__echo"}},
		{[]string{"remove", "--scope", "project", ""}, []string{"docs", "proj"}, nil},
		{[]string{"--home", home, "disable", ""}, []string{"sleepy"}, nil},
		{[]string{"get", "docs", ""}, nil, []string{"docs", "sleepy"}},
		{[]string{"call", ""}, []string{"docs__echo", "docs__add", "sleepy__echo"}, []string{"proj\n"}},
		{[]string{"call", "docs__e"}, []string{"docs__echo"}, []string{"docs__add", "sleepy__echo"}},
		{[]string{"tools", ""}, []string{"docs\n", "docs__echo", "sleepy\n", "proj\n"}, nil},
		{[]string{"tools", "--f"}, []string{"--format"}, nil},
		{[]string{"search", "-"}, []string{"-k\tshow the best N matches", "-v\t", "--home\tSwitchboard's home dir"}, []string{"--k\t", "--v\t", "`"}},
		{[]string{"add", "--"}, []string{"--scope", "--transport", "--env", "--home"}, nil},
		{[]string{"add", "--scope", ""}, []string{"user", "project"}, nil},
		{[]string{"--scope", ""}, []string{"user", "project"}, nil},
		{[]string{"add", "--transport", ""}, []string{"http", "sse"}, nil},
		{[]string{"tools", "--format", ""}, []string{"openai", "anthropic", "gemini"}, nil},
		{[]string{"serve", "--log-format", ""}, []string{"text", "json"}, nil},
		{[]string{"import", "--from", ""}, []string{"claude-desktop", "cursor", "vscode"}, nil},
		{[]string{"connect", ""}, []string{"claude-desktop", "cursor", "vscode", "codex"}, nil},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, nil},
		{[]string{"help", "di"}, []string{"diff", "disable", "disconnect"}, []string{"tools\n"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runIn(t, dir, home, append([]string{"__complete"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("completions lack %q:\n%s", w, r.stdout)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(r.stdout, w) {
					t.Errorf("completions offer %q:\n%s", w, r.stdout)
				}
			}
		})
	}
	if n := starts(t, mark); n != before {
		t.Errorf("completing started the sleeper %d times", n-before)
	}
	// No store is created to complete a tool name.
	empty := t.TempDir()
	if r := runIn(t, dir, empty, "__complete", "call", ""); r.code != 0 || strings.Contains(r.stdout, "__") {
		t.Errorf("call in an empty home: exit %d\n%s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(empty, "state.db")); err == nil {
		t.Error("completing created state.db")
	}
}

// TestCompletionScripts: each shell's script is printed; bash loads the
// bash one and, through it, completes a command name by asking a real
// switchboard (this test binary) for it.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if r := run(t, "completion", sh); r.code != 0 || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: exit %d\n%s", sh, r.code, r.stderr)
		}
	}
	if r := run(t, "completion", "tcsh"); r.code != 2 || !strings.Contains(r.stderr, "bash, zsh, fish") {
		t.Errorf("completion tcsh: exit %d\n%s", r.code, r.stderr)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Log("no bash here: the bash script is not loaded")
		return
	}
	home, dir, _ := completionHome(t)
	exe, _ := os.Executable()
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nSWITCHBOARD_CLI_RUN=1 SWITCHBOARD_HOME='" + home + "' exec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "switchboard"), []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "switchboard.bash")
	r := run(t, "completion", "bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// The script takes the words from bash-completion's
	// _get_comp_words_by_ref; where that package is not installed, the
	// words are taken as bash split them.
	prog := `
for f in /usr/share/bash-completion/bash_completion /etc/bash_completion; do
  [ -r "$f" ] && { . "$f"; break; }
done
declare -F _get_comp_words_by_ref >/dev/null || _get_comp_words_by_ref() {
  cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
  words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
}
. "$1" || exit 9
complete -p switchboard >/dev/null || exit 8
complete_line() {
  COMP_WORDS=($1); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
  [ "${1: -1}" = " " ] && { COMP_WORDS+=(""); COMP_CWORD=$((COMP_CWORD+1)); }
  COMPREPLY=(); __start_switchboard switchboard "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  printf '%s\n' "${COMPREPLY[@]}"
}
echo "== tr"; complete_line "switchboard tr"
echo "== call"; complete_line "switchboard call docs__ec"
`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr // compopt says it is not called from a real completion
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\n%s%s", err, out, stderr.String())
	}
	got := string(out)
	if !strings.Contains(got, "== tr\ntrust-project\n") || !strings.Contains(got, "== call\ndocs__echo\n") {
		t.Errorf("bash completed:\n%s", got)
	}
}
