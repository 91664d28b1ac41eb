package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

// A timeout names what the server did not answer and which setting bounded
// the wait: "did not answer initialize within 10s (startupTimeoutMs)".
// While connecting, the capture connection (stdio, SSE) and the round
// tripper (Streamable HTTP) note in the dial's context the method of each
// request they send, so that the handshake's timeout can name the one left
// unanswered (server/discover, or initialize).

type phaseKey struct{}

// withPhase returns ctx carrying a recorder of the last request sent.
func withPhase(ctx context.Context) context.Context {
	return context.WithValue(ctx, phaseKey{}, new(atomic.Pointer[string]))
}

// notePhase records method as the request ctx's operation sent last.
func notePhase(ctx context.Context, method string) {
	if r, ok := ctx.Value(phaseKey{}).(*atomic.Pointer[string]); ok {
		r.Store(&method)
	}
}

// lastPhase returns the method recorded in ctx, or "".
func lastPhase(ctx context.Context) string {
	if r, ok := ctx.Value(phaseKey{}).(*atomic.Pointer[string]); ok {
		if m := r.Load(); m != nil {
			return *m
		}
	}
	return ""
}

// notePhaseHTTP records the method of a JSON-RPC request posted while
// connecting. Only a context that records phases (the handshake's) pays
// for reading the body, which go-sdk gives as a bytes.Reader (GetBody).
func notePhaseHTTP(req *http.Request) {
	if req.Method != http.MethodPost || req.GetBody == nil || req.Context().Value(phaseKey{}) == nil {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &m) == nil && len(m.ID) > 0 && m.Method != "" {
		notePhase(req.Context(), m.Method)
	}
}

// limitKey labels a context's deadline with the setting that made it.
type limitKey struct{}

type limit struct {
	d       time.Duration
	setting string
}

// WithStartup bounds ctx by s's startupTimeoutMs and labels the deadline,
// so that an operation it cuts short (a discovery after Dial) names the
// setting in its error.
func WithStartup(ctx context.Context, s *config.Server) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, s.StartupTimeout)
	return context.WithValue(ctx, limitKey{}, limit{s.StartupTimeout, "startupTimeoutMs"}), cancel
}

// timedOut words err, which ended an operation bounded by ctx (derived
// from parent with its own limit own), as the request method that was not
// answered ("" for a handshake that sent none) within the setting whose
// deadline passed. Other errors, and a deadline of the caller's that names
// no setting, are returned as they are.
func timedOut(parent, ctx context.Context, own limit, method string, err error) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	what := "answer " + method
	if method == "" {
		what = "complete the MCP handshake"
	}
	l := own
	if parent.Err() != nil {
		var ok bool
		if l, ok = parent.Value(limitKey{}).(limit); !ok || !errors.Is(parent.Err(), context.DeadlineExceeded) {
			return err
		}
	}
	return fmt.Errorf("did not %s within %v (%s): %w", what, l.d, l.setting, err)
}
