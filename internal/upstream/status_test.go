package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestHTTPRefusalCodes: an HTTP refusal of a call maps to a stable code,
// whichever way go-sdk words it.
func TestHTTPRefusalCodes(t *testing.T) {
	status := 0 // set per case; the handshake always succeeds
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if status != 0 && bytes.Contains(body, []byte(`"tools/call"`)) {
			http.Error(w, http.StatusText(status), status)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mcpHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg, err := config.Parse([]byte(`{"mcpServers":{"s":{"url":"`+srv.URL+`","trust":"trusted"}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		status int
		want   fault.Code
	}{
		{http.StatusUnauthorized, fault.CodeAuthFailure},
		{http.StatusForbidden, fault.CodeAuthFailure},
		{http.StatusTooManyRequests, fault.CodeRateLimited},
		{http.StatusServiceUnavailable, fault.CodeTransient},
		{http.StatusBadGateway, fault.CodeTransient},
		{http.StatusGatewayTimeout, fault.CodeServerError},
		{http.StatusInternalServerError, fault.CodeServerError},
		{http.StatusRequestEntityTooLarge, fault.CodeTooLarge},
	}
	for _, tt := range tests {
		// go-sdk ends the session on a refusal it does not consider
		// transient (401, 403, 413), so each case dials afresh.
		status = 0
		c, err := Dial(context.Background(), cfg.Servers[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		status = tt.status
		_, err = c.CallTool(context.Background(), "echo", []byte(`{"text":"x"}`), nil)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != tt.want || fe.Server != "s" {
			t.Errorf("HTTP %d: err = %v, want code %s naming the server", tt.status, err, tt.want)
		}
		c.Close()
	}
}

// TestHTTPRefusalAtConnect: a server that refuses Switchboard's credentials
// during the handshake fails the dial with auth_failure.
func TestHTTPRefusalAtConnect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	cfg, err := config.Parse([]byte(`{"mcpServers":{"s":{"url":"`+srv.URL+`","trust":"trusted"}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dial(context.Background(), cfg.Servers[0], nil)
	if fault.CodeOf(err) != fault.CodeAuthFailure {
		t.Fatalf("dial = %v, want auth_failure", err)
	}
}
