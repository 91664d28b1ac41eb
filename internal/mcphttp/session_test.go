package mcphttp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUnknownSession: a request naming a legacy session this process does
// not know (one that another replica opened, or that a restart lost) is
// answered 404 at once, as the specification says (2025-11-25, Transports,
// Session Management), so that the client initializes a new session; it
// never hangs. That holds for a POST, the GET stream and a DELETE.
func TestUnknownSession(t *testing.T) {
	nop := make(chan struct{})
	url, _ := serve(t, NewHandler(newServer(nil, nil, nop, nil), nil), nil)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader(list)
			}
			req, _ := http.NewRequestWithContext(ctx, method, url, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", "no-such-session")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v (a request on an unknown session must be answered at once)", method, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s on an unknown session: %d %s, want 404", method, resp.StatusCode, b)
			}
		})
	}
}
