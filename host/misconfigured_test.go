package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestMissingVariableMisconfiguresOneServer: a server whose configuration
// references a variable that is not set is misconfigured, says why, is
// never started and refuses calls with a fault naming the variable; the
// other server serves. Once the variable is set, a reload starts it.
func TestMissingVariableMisconfiguresOneServer(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "starts")
	gh := child(t, testkit.ModeSleeper, nil)
	gh["env"].(map[string]string)[testkit.MarkVar] = mark
	gh["env"].(map[string]string)["GITHUB_TOKEN"] = "${GITHUB_TOKEN}"
	servers := map[string]any{"gh": gh, "ok": child(t, testkit.ModeServer, nil)}
	var logs syncBuf
	h := openWith(t, parse(t, servers, nil), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	const reason = `server "gh": ${GITHUB_TOKEN} is not set (env.GITHUB_TOKEN)`
	st := status(h, "gh")
	if st.State != host.StateMisconfigured || st.LastError != reason || st.Tools != 0 {
		t.Errorf("gh: state %q, tools %d, last error %q; want %q, 0, %q", st.State, st.Tools, st.LastError, host.StateMisconfigured, reason)
	}
	if st := status(h, "ok"); st.State != host.StateReady {
		t.Errorf("ok: state %q (%s), want ready", st.State, st.LastError)
	}
	if got := call(t, h, "ok__echo", `{"text":"served"}`).Text; got != "served" {
		t.Errorf("ok__echo = %q", got)
	}

	_, err := h.Call(context.Background(), "gh__echo", []byte(`{"text":"x"}`), nil)
	if fault.CodeOf(err) != fault.CodeUnavailable || !errors.Is(err, config.ErrMissingVar) || !strings.Contains(err.Error(), "${GITHUB_TOKEN} is not set (env.GITHUB_TOKEN)") {
		t.Errorf("gh__echo: %v (code %q); want unavailable naming ${GITHUB_TOKEN} and env.GITHUB_TOKEN", err, fault.CodeOf(err))
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the misconfigured server was started (%s: %v)", mark, err)
	}
	if n := strings.Count(logs.String(), "server misconfigured"); n != 1 {
		t.Errorf("%d warnings for the misconfigured server, want 1:\n%s", n, logs.String())
	}

	// Set the variable: a reload starts the server.
	if err := h.Reload(context.Background(), parse(t, servers, map[string]string{"GITHUB_TOKEN": "t0ken"})); err != nil {
		t.Fatal(err)
	}
	if st := status(h, "gh"); st.State != host.StateReady || st.LastError != "" {
		t.Errorf("after the reload, gh: state %q, last error %q; want ready", st.State, st.LastError)
	}
	if got := call(t, h, "gh__echo", `{"text":"now"}`).Text; got != "now" {
		t.Errorf("gh__echo after the reload = %q", got)
	}
	// And unset again: it is misconfigured again, and stopped.
	if err := h.Reload(context.Background(), parse(t, servers, nil)); err != nil {
		t.Fatal(err)
	}
	if st := status(h, "gh"); st.State != host.StateMisconfigured || st.LastError != reason {
		t.Errorf("after unsetting, gh: state %q, last error %q", st.State, st.LastError)
	}
	if _, err := h.Call(context.Background(), "gh__echo", []byte(`{"text":"x"}`), nil); fault.CodeOf(err) != fault.CodeUnavailable {
		t.Errorf("gh__echo after unsetting: %v, want unavailable", err)
	}
}
