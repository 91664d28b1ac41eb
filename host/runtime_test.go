package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestRuntimeMissingIsPermanent: a server whose runtime is missing fails
// with runtime_missing, which its calls carry (not retryable), and is not
// started again; a server whose runtime is too old, runtime_too_old; the
// other server serves.
func TestRuntimeMissingIsPermanent(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	old := t.TempDir()
	script := "#!/bin/sh\necho v16.20.2\n"
	if err := os.WriteFile(filepath.Join(old, "node"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{
		"gone": map[string]any{"command": "uvx", "args": []string{"mcp-server-fetch"}, "env": map[string]string{"PATH": empty}},
		"old":  map[string]any{"command": "node", "args": []string{"server.js"}, "env": map[string]string{"PATH": old}, "runtime": map[string]string{"node": ">=20"}},
		"ok":   child(t, testkit.ModeServer, nil),
	}
	h := openWith(t, parse(t, servers, nil), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	if got := call(t, h, "ok__echo", `{"text":"served"}`).Text; got != "served" {
		t.Errorf("ok__echo = %q", got)
	}
	for _, tt := range []struct {
		name string
		code fault.Code
		want string
	}{
		{"gone", fault.CodeRuntimeMissing, `uv is not installed: "uvx" not found in PATH (` + empty + `): install uv see https://docs.astral.sh/uv/`},
		{"old", fault.CodeRuntimeTooOld, `needs node >=20, found 16.20.2 (` + filepath.Join(old, "node") + `): install Node.js (node >=20) from https://nodejs.org`},
	} {
		st := status(h, tt.name)
		if st.State != host.StateFailed || !strings.Contains(st.LastError, tt.want) {
			t.Errorf("%s: state %q, last error %q; want failed with %q", tt.name, st.State, st.LastError, tt.want)
		}
		_, err := h.Call(context.Background(), tt.name+"__echo", []byte(`{}`), nil)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != tt.code || fe.Code.Retryable() || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s__echo: %v (code %q); want %s with %q", tt.name, err, fault.CodeOf(err), tt.code, tt.want)
		}
	}
}
