package host_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// leakySecrets are the secrets of leakyServer's configuration, each of
// which the server echoes to its stderr.
var leakySecrets = []string{"argsecret-e2e-1", "envsecret-e2e-2", "urlsecret-e2e-3", "querysecret-e2e-4"}

// leakyServer is a server of mode with a secret in its args and env (both
// substituted from variables) and in a URL, which the mode echoes.
func leakyServer(t testing.TB, mode string) map[string]any {
	env := testkit.ChildEnv(mode)
	env["API_TOKEN"] = "${TOK}"
	env[testkit.LeakyURLVar] = "https://alice:${PW}@127.0.0.1:9/x?api_key=querysecret-e2e-4&page=2"
	return child(t, mode, map[string]any{
		"args":            []string{"--api-key", "${ARG}"},
		"env":             env,
		"startupAttempts": 1,
	})
}

var leakyLookup = map[string]string{"ARG": "argsecret-e2e-1", "TOK": "envsecret-e2e-2", "PW": "urlsecret-e2e-3"}

// TestServerOutputMasked: a server that echoes its secrets to stderr
// shows none of them in its status (LastError, Stderr, as JSON), in the
// error of a call to it, or in the log; "***" stands in their place.
func TestServerOutputMasked(t *testing.T) {
	t.Parallel()
	var log testkit.Buffer
	opts := *fastOpts
	opts.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := openWith(t, parse(t, map[string]any{
		"broken": leakyServer(t, testkit.ModeLeaky),
		"chatty": leakyServer(t, testkit.ModeLeakyServer),
	}, leakyLookup), &opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Ready(ctx, "chatty"); err != nil {
		t.Fatal(err)
	}
	_, callErr := h.Call(ctx, "broken__anything", nil, nil)
	if callErr == nil {
		t.Fatal("a call to the broken server succeeded")
	}
	broken, chatty := status(h, "broken"), status(h, "chatty")
	data, err := json.Marshal(h.Servers())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, text string }{
		{"broken's last error", broken.LastError},
		{"chatty's stderr", chatty.Stderr},
		{"call error", callErr.Error()},
	} {
		if !strings.Contains(tt.text, "***") || !strings.Contains(tt.text, "ECONNREFUSED https://alice:***@127.0.0.1:9/x?api_key=***&page=2") {
			t.Errorf("%s is not masked:\n%s", tt.name, tt.text)
		}
	}
	for _, s := range leakySecrets {
		for what, text := range map[string]string{"status JSON": string(data), "call error": callErr.Error(), "log": log.String()} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %q:\n%s", what, s, text)
			}
		}
	}
	if broken.State != host.StateFailed {
		t.Errorf("broken is %s, want failed", broken.State)
	}
}
