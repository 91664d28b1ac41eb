package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// serve runs `switchboard serve args...` with only env as its environment
// (a fresh SWITCHBOARD_HOME unless env sets it or HOME), waits until it
// exits or has printed its whole banner, stops it, and returns its exit
// code and stderr.
func serve(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	exe, _ := os.Executable()
	if _, ok := env["HOME"]; !ok && env["SWITCHBOARD_HOME"] == "" {
		env = withEnv(env, "SWITCHBOARD_HOME", t.TempDir())
	}
	var stderr testkit.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(ctx, cli.Env{
			Args:   append([]string{"serve"}, args...),
			Stdout: nopWriter{}, Stderr: &stderr, Executable: exe, Version: "test", StartupWait: testWait,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		})
	}()
	exited := -1
	banner := func() bool {
		select {
		case exited = <-code:
			return true
		default:
			return strings.Contains(stderr.String(), `"--stdio"`) // the banner's last snippet
		}
	}
	if !proc.Eventually(30*time.Second, banner) {
		t.Fatalf("serve %q neither exited nor printed its banner:\n%s", args, stderr.String())
	}
	if exited < 0 {
		cancel()
		select {
		case exited = <-code:
		case <-time.After(20 * time.Second):
			t.Fatalf("serve %q did not stop:\n%s", args, stderr.String())
		}
	}
	return result{code: exited, stderr: stderr.String()}
}

func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// TestServeFlags: how serve's addresses, token and banner follow from its
// flags, end to end on real listeners (a refused combination exits 2
// before anything listens).
func TestServeFlags(t *testing.T) {
	t.Parallel()
	empty := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
	cwd, _ := os.Getwd()
	relEmpty, err := filepath.Rel(cwd, empty)
	if err != nil {
		t.Fatal(err)
	}
	desktopHome := t.TempDir()
	// Homes holding a configuration, so that no --config is needed.
	homeWith := func(dir string) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"mcpServers": {}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	userHome := t.TempDir()
	homeWith(filepath.Join(userHome, ".switchboard"))
	envHome := homeWith(t.TempDir())
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     []string // substrings of stderr
		notWant  []string
	}{
		{"bare port is loopback", nil, []string{"--http", "0", "--config", empty}, 0,
			[]string{"endpoint: http://127.0.0.1:"}, []string{"not a loopback address"}},
		{"no-auth on every interface refused", nil, []string{"--http", ":0", "--no-auth", "--config", empty}, 2,
			[]string{"every interface", "refusing", "--allow-remote"}, []string{"endpoint:"}},
		{"no-auth on a bare port is loopback", nil, []string{"--http", "0", "--no-auth", "--config", empty}, 0,
			[]string{"endpoint: http://127.0.0.1:", "token:    none"}, nil},
		{"no-auth with allow-host refused", nil, []string{"--http", "127.0.0.1:0", "--no-auth", "--allow-host", "example.com", "--config", empty}, 2,
			[]string{"--allow-host example.com", "--allow-remote"}, nil},
		{"no-auth with allow-host and allow-remote", nil, []string{"--http", "127.0.0.1:0", "--no-auth", "--allow-host", "example.com", "--allow-remote", "--config", empty}, 0,
			[]string{"token:    none"}, nil},
		{"public-url with stdio refused", nil, []string{"--stdio", "--public-url", "https://gw.example.com", "--config", empty}, 2,
			[]string{"--public-url", "--stdio"}, nil},
		{"public-url over plain http elsewhere refused", nil, []string{"--http", "127.0.0.1:0", "--public-url", "http://gw.example.com", "--config", empty}, 2,
			[]string{"plain http only on a loopback host"}, []string{"endpoint:"}},
		{"public-url on loopback", nil, []string{"--http", "127.0.0.1:0", "--public-url", "http://127.0.0.1:8939", "--config", empty}, 0,
			[]string{"endpoint: http://127.0.0.1:"}, []string{"--public-url"}},
		{"short token refused", map[string]string{"TOK": "0123456789abcde"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 2,
			[]string{"--token-env TOK", "shorter than 16 bytes", "openssl rand -hex 32", "omit --token-env"}, []string{"0123456789abcde"}},
		{"token with a space refused", map[string]string{"TOK": "0123456789abcdef 0123"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 2,
			[]string{"--token-env TOK", "not allowed in a bearer token"}, []string{"0123456789abcdef"}},
		{"16-byte token accepted", map[string]string{"TOK": "0123456789abcdef"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 0,
			[]string{"token:    from $TOK"}, []string{"0123456789abcdef"}},
		{"Cursor takes the variable", map[string]string{"TOK": "0123456789abcdef0123"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 0,
			[]string{`"headers": {"Authorization": "Bearer ${env:TOK}"}`, `--header "Authorization: Bearer $TOK"`}, []string{"0123456789abcdef0123"}},
		{"Claude Desktop gets --config and --home", nil, []string{"--http", "127.0.0.1:0", "--home", desktopHome, "--config", relEmpty}, 0,
			[]string{`"args": ["serve", "--stdio", "--config", ` + q(empty) + `, "--home", ` + q(desktopHome) + `]}`}, nil},
		{"Claude Desktop gets SWITCHBOARD_HOME", map[string]string{"HOME": userHome, "SWITCHBOARD_HOME": envHome}, []string{"--http", "127.0.0.1:0"}, 0,
			[]string{`"args": ["serve", "--stdio", "--home", ` + q(envHome) + `]}`}, nil},
		{"Claude Desktop defaults", map[string]string{"HOME": userHome}, []string{"--http", "127.0.0.1:0"}, 0,
			[]string{`"args": ["serve", "--stdio"]}`, "0 servers"}, nil},
		{"Claude Desktop default home, its config", map[string]string{"HOME": userHome}, []string{"--http", "127.0.0.1:0", "--config", filepath.Join(userHome, ".switchboard", "config.json")}, 0,
			[]string{`"args": ["serve", "--stdio"]}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := serve(t, tt.env, tt.args...)
			ok := r.code == tt.wantCode
			for _, w := range tt.want {
				ok = ok && strings.Contains(r.stderr, w)
			}
			for _, w := range tt.notWant {
				ok = ok && !strings.Contains(r.stderr, w)
			}
			if !ok {
				t.Errorf("serve %q: exit %d, want %d; want %q, not %q in stderr:\n%s", tt.args, r.code, tt.wantCode, tt.want, tt.notWant, r.stderr)
			}
		})
	}
}

// TestServeTokenKept: the generated token is kept in the home (mode 0600)
// and served again by the next start, so pasted configurations survive a
// restart; --token-env still wins; a token file that others may read is
// refused with what to do.
func TestServeTokenKept(t *testing.T) {
	t.Parallel()
	empty := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
	home := t.TempDir()
	file := filepath.Join(home, "token")
	args := []string{"--http", "127.0.0.1:0", "--home", home, "--config", empty}
	re := regexp.MustCompile(`token:\s+(.*) kept in (\S+) (?:since|for) .*: (\S+)\n`)
	token := func(r result, how string) string {
		t.Helper()
		m := re.FindStringSubmatch(r.stderr)
		if r.code != 0 || m == nil || m[1] != how || m[2] != file {
			t.Fatalf("exit %d, want a token %s kept in %s:\n%s", r.code, how, file, r.stderr)
		}
		return m[3]
	}
	first := token(serve(t, nil, args...), "generated and")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %04o, want 0600", file, fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != first {
		t.Errorf("%s holds %q, the banner said %q", file, b, first)
	}
	if second := token(serve(t, nil, args...), ""); second != first {
		t.Errorf("the second start served %q, the first %q", second, first)
	}
	if left := mustGlob(t, filepath.Join(home, ".token-*")); len(left) > 0 {
		t.Errorf("temporary token files left behind: %q", left)
	}

	env := map[string]string{"TOK": "0123456789abcdef0123"}
	r := serve(t, env, append(args, "--token-env", "TOK")...)
	if r.code != 0 || !strings.Contains(r.stderr, "token:    from $TOK") || strings.Contains(r.stderr, first) {
		t.Errorf("--token-env with a kept token: exit %d:\n%s", r.code, r.stderr)
	}
}

// TestServeTokenFileRefused: a token file that group or others may read or
// change, or that holds no usable token, is refused before anything starts,
// with what to do, and never shown.
func TestServeTokenFileRefused(t *testing.T) {
	t.Parallel()
	empty := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
	const good = "Vq3sM0xk8yQ2pT7wZ1cR5nL9bF4dH6gJ0aE2iK8oU3s"
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    []string
	}{
		{"world-readable", good, 0o644, []string{"group or others may read", "mode 0644", "chmod 600"}},
		{"group-readable", good, 0o640, []string{"group or others may read", "mode 0640", "chmod 600"}},
		{"world-writable", good, 0o602, []string{"group or others may read", "mode 0602"}},
		{"too short", "tooshort", 0o600, []string{"shorter than 16 bytes", "remove the file"}},
		{"not a bearer token", "has spaces in the middle of it", 0o600, []string{"not allowed in a bearer token", "remove the file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			file := filepath.Join(home, "token")
			if err := os.WriteFile(file, []byte(tt.content+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, tt.mode); err != nil {
				t.Fatal(err)
			}
			r := serve(t, nil, "--http", "127.0.0.1:0", "--home", home, "--config", empty)
			ok := r.code == 2 && strings.Contains(r.stderr, file) && !strings.Contains(r.stderr, tt.content) && !strings.Contains(r.stderr, "endpoint:")
			for _, w := range tt.want {
				ok = ok && strings.Contains(r.stderr, w)
			}
			if !ok {
				t.Errorf("exit %d, want 2 and %q:\n%s", r.code, tt.want, r.stderr)
			}
		})
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
