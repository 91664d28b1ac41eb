package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestNeedsLoginThroughTheGateway: a call to a server that needs an OAuth
// login is an isError result with the code needs_login and the command
// to run, never a token-bearing error, and nothing is asked of the
// authorization server.
func TestNeedsLoginThroughTheGateway(t *testing.T) {
	t.Parallel()
	as, g, _ := loginGateway(t)
	ctx := context.Background()
	cs := inMemory(t, g, nil, "")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Fatalf("call: %+v, %v; want an isError result", res, err)
	}
	m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any)
	if m["code"] != "needs_login" || m["command"] != "switchboard login gh" || m["retryable"] != false {
		t.Errorf("_meta = %v, want needs_login with the command", m)
	}
	if txt := text(t, res); !strings.Contains(txt, "needs login (run: switchboard login gh)") {
		t.Errorf("text = %q", txt)
	}
	if as.Count("authorize")+as.Count("register")+as.Count("token") != 0 {
		t.Error("the gateway started a login nobody can finish")
	}
}

// loginGateway is a gateway over a host whose one server, gh, needs an
// OAuth login, its grants kept in the returned creds.json.
func loginGateway(t *testing.T) (*oauthtest.Server, *gateway.Gateway, string) {
	t.Helper()
	as := oauthtest.Start(t, nil)
	rig := oauthhost.Open(t, as.MCP, nil)
	return as, gateway.New(rig.Host, nil), rig.Creds
}

var urlCaps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}

// TestLoginOfferedByURLElicitation: a 2025 client that declared URL-mode
// elicitation is sent elicitation/create in url mode with the login URL;
// its handler follows the URL as a browser would, and the call returns
// the tool's result, the grant kept in creds.json; concurrent calls share
// one login. A client that declared only form elicitation gets the
// isError result with the command.
func TestLoginOfferedByURLElicitation(t *testing.T) {
	t.Parallel()
	as, g, creds := loginGateway(t)

	formOnly := inMemory(t, g, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a client without url elicitation was asked")
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}, "2025-11-25")
	res, err := formOnly.CallTool(context.Background(), &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Fatalf("form-only call: %+v, %v; want the isError result", res, err)
	}
	if m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any); m["command"] != "switchboard login gh" {
		t.Fatalf("form-only _meta = %v", m)
	}

	var asked atomic.Int32
	second := make(chan struct{})
	var urls []string
	var mu sync.Mutex
	cs := inMemory(t, g, &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			n := asked.Add(1)
			if req.Params.Mode != "url" || req.Params.ElicitationID == "" || !strings.Contains(req.Params.Message, `"gh"`) {
				t.Errorf("elicitation = %+v", req.Params)
			}
			mu.Lock()
			urls = append(urls, req.Params.URL)
			if len(urls) == 2 {
				close(second)
			}
			mu.Unlock()
			if n == 1 {
				// Logged in only once the other call has been offered
				// the same login.
				select {
				case <-second:
				case <-time.After(10 * time.Second):
					t.Error("the second call was not offered the login")
				}
				if err := oauthtest.Browse(ctx, req.Params.URL); err != nil {
					t.Error(err)
				}
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 2)
	for i := range results {
		wg.Go(func() {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	for i, r := range results {
		if r == nil || r.IsError || !strings.Contains(text(t, r), "caller ok") {
			t.Fatalf("call %d after the login: %+v", i, r)
		}
	}
	mu.Lock()
	if len(urls) != 2 {
		t.Errorf("%d elicitations, want one per call", len(urls))
	}
	for _, u := range urls[1:] {
		if u != urls[0] {
			t.Errorf("two logins: %q and %q", urls[0], u)
		}
	}
	mu.Unlock()
	if n := as.Count("token"); n != 1 {
		t.Errorf("%d token requests, want one login", n)
	}
	data, err := os.ReadFile(creds)
	if err != nil || !strings.Contains(string(data), as.MCP) {
		t.Fatalf("creds.json: %v\n%s", err, data)
	}
	// Another call needs no login.
	res, err = formOnly.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call after the login: %+v, %v", res, err)
	}
	for _, tok := range as.Issued() {
		if strings.Contains(text(t, res), tok) || strings.Contains(strings.Join(urls, " "), tok) {
			t.Fatal("a token reached the client")
		}
	}
}

// TestLoginURLElicitationRequired: a 2026-07-28 client, which the gateway
// cannot ask during a call, gets the URLElicitationRequired error (-32042)
// naming the login URL; once the URL has been followed, the call made
// again returns the tool's result.
func TestLoginURLElicitationRequired(t *testing.T) {
	t.Parallel()
	as, g, _ := loginGateway(t)
	cs := inMemory(t, g, &mcp.ClientOptions{Capabilities: urlCaps}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("call: %v; want -32042", err)
	}
	var data struct{ Elicitations []*mcp.ElicitParams }
	if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" {
		t.Fatalf("error data %s: %v", rpc.Data, err)
	}
	if err := oauthtest.Browse(ctx, data.Elicitations[0].URL); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok") {
		t.Fatalf("call after the login: %+v, %v", res, err)
	}
	if n := as.Count("token"); n != 1 {
		t.Errorf("%d token requests, want one", n)
	}
}
