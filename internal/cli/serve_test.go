package cli_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/cli"
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
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(ctx, cli.Env{
			Args:   append([]string{"serve"}, args...),
			Stdout: nopWriter{}, Stderr: &stderr, Executable: exe, Version: "test",
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
	empty := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
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
		{"short token refused", map[string]string{"TOK": "0123456789abcde"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 2,
			[]string{"--token-env TOK", "shorter than 16 bytes", "openssl rand -hex 32", "omit --token-env"}, []string{"0123456789abcde"}},
		{"token with a space refused", map[string]string{"TOK": "0123456789abcdef 0123"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 2,
			[]string{"--token-env TOK", "not allowed in a bearer token"}, []string{"0123456789abcdef"}},
		{"16-byte token accepted", map[string]string{"TOK": "0123456789abcdef"}, []string{"--http", "127.0.0.1:0", "--token-env", "TOK", "--config", empty}, 0,
			[]string{"token:    from $TOK"}, []string{"0123456789abcdef"}},
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
