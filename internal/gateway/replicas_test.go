package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/postgres"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// replica is a gateway over HTTP on a host of its own with store st (nil:
// none), in front of servers, as one `serve` of several behind a load
// balancer.
func replica(t *testing.T, st store.Store, servers map[string]any) *fixture {
	t.Helper()
	cfg := parseDoc(t, map[string]any{"mcpServers": servers}, nil)
	h, err := host.Open(context.Background(), cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, Forward: true}, st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	connected(t, h)
	g := gateway.New(h, &gateway.Options{Version: "test"})
	base := serveHTTP(t, g, gateway.HTTPOptions{Front: frontdoor.Options{Token: token}})
	return &fixture{url: base + "/mcp", host: h}
}

// connected waits until every server of h can take requests (Host.Ready).
func connected(t *testing.T, h *host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, s := range h.Servers() {
		if err := h.Ready(ctx, s.Name); err != nil {
			t.Fatalf("server %s: %v", s.Name, err)
		}
	}
}

// replicaServers are the upstreams of every replica: "web", one
// 2026-07-28 Streamable HTTP server that all share, which asks through
// input-required results (the gateway seals its requestState), and "s", a
// legacy stdio server of each replica's own, whose questions the gateway
// parks.
func replicaServers(t *testing.T) map[string]any {
	t.Helper()
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(web.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"web": map[string]any{"url": web.URL, "trust": "trusted"},
		"s":   map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted", "protocolVersion": "2025-11-25"},
	}
}

// manual connects a 2026-07-28 client that declares elicitation but does
// not answer input requests itself: the test carries each round trip, to
// whichever replica.
func (f *fixture) manual(t *testing.T) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "manual-client", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("the test answers input requests itself")
		},
	})
	return f.connectWith(t, c, "")
}

// ask calls tool, which must ask for input, and returns the answers to
// its questions (every one an elicitation, accepted with name "Ada") and
// the requestState to send them with.
func ask(t *testing.T, cs *mcp.ClientSession, tool string) (mcp.InputResponseMap, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("%s: %+v (%q); want an input-required result with a requestState", tool, res, text(t, res))
	}
	answers := mcp.InputResponseMap{}
	for id, req := range res.InputRequests {
		if _, ok := req.(*mcp.ElicitParams); !ok {
			t.Fatalf("%s asks %T, want an elicitation", tool, req)
		}
		answers[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
	}
	return answers, res.RequestState
}

// retry sends answers with state for tool.
func retry(cs *mcp.ClientSession, tool string, answers mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{},
		InputResponses: answers, RequestState: state})
}

// invalidParams fails the test unless err is -32602 saying want.
func invalidParams(t *testing.T, what string, err error, want string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, want) {
		t.Errorf("%s: %v; want -32602 saying %q", what, err, want)
	}
}

// TestReplicasShareRequestStates: 2026-07-28 clients are stateless, so a
// load balancer may send the retry of a multi-round-trip call to another
// replica than the one that asked. Replicas sharing a store (PostgreSQL,
// or one SQLite file) sign request states with the store's key: the state
// replica A issued is accepted by replica B, and the call completes. A
// gateway on another store refuses it, as the signature says. A parked
// call (a legacy upstream's question) lives in A's memory: B answers its
// state with the error that says to call the tool again, and A still
// completes it.
func TestReplicasShareRequestStates(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) (store.Store, store.Store){
		"postgres": func(t *testing.T) (store.Store, store.Store) {
			url := pgtest.URL(t)
			return openPostgres(t, url), openPostgres(t, url)
		},
		"sqlite": func(t *testing.T) (store.Store, store.Store) {
			path := filepath.Join(t.TempDir(), "state.db")
			return openSQLite(t, path), openSQLite(t, path)
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			servers := replicaServers(t)
			stA, stB := open(t)
			a, b := replica(t, stA, servers), replica(t, stB, servers)
			apart := replica(t, openSQLite(t, filepath.Join(t.TempDir(), "other.db")), servers)
			ca, cb, cApart := a.manual(t), b.manual(t), apart.manual(t)

			answers, state := ask(t, ca, "web__ask")
			res, err := retry(cb, "web__ask", answers, state)
			if err != nil || res.IsError || res.NeedsInput() || text(t, res) != "accept: Ada" {
				t.Errorf("A's requestState answered at B: %+v, %v; want the call completed", res, err)
			}
			_, err = retry(cApart, "web__ask", answers, state)
			invalidParams(t, "A's requestState at a gateway on another store", err, "not one Switchboard issued")

			answers, state = ask(t, ca, "s__ask")
			_, err = retry(cb, "s__ask", answers, state)
			invalidParams(t, "A's parked call answered at B", err, "call the tool again")
			res, err = retry(ca, "s__ask", answers, state)
			if err != nil || res.IsError || text(t, res) != "accept: Ada" {
				t.Errorf("A's parked call answered at A after B refused it: %+v, %v", res, err)
			}
		})
	}
}

func openPostgres(t *testing.T, url string) store.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openSQLite(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
