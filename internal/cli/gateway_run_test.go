package cli_test

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// gatewayRun is a `switchboard serve --http 127.0.0.1:0` running in this
// process, with what its banner said.
type gatewayRun struct {
	url    string // the MCP endpoint
	base   string // http://host:port
	token  string // the bearer token kept in the home; "" with --token-env or --no-auth
	stderr *testkit.Buffer

	t      testing.TB
	cancel context.CancelFunc
	code   chan int
	once   sync.Once
	exit   int // serve's exit code once stopped; -1 when it did not stop
}

// bannerRE matches the banner up to its token line: the endpoint, and
// the token itself when it is the one kept in the home.
var bannerRE = regexp.MustCompile(`endpoint: (http://[0-9.:]+)(/mcp)\s[\s\S]*?\n  token: +(?:.*kept in .*: (\S+)|.*)\n`)

// startGateway runs `switchboard serve --http 127.0.0.1:0 args...` with
// env as its whole environment and dir as its working directory ("" for
// this one), waits until its banner shows the endpoint and the token, and
// stops it at cleanup. Its banner waits testWait for the servers.
func startGateway(t testing.TB, env map[string]string, dir string, args ...string) *gatewayRun {
	t.Helper()
	return startGatewayWait(t, testWait, env, dir, args...)
}

// startGatewayWait is startGateway whose banner waits at most wait for the
// servers (cli.Env.StartupWait).
func startGatewayWait(t testing.TB, wait time.Duration, env map[string]string, dir string, args ...string) *gatewayRun {
	t.Helper()
	exe, _ := os.Executable()
	ctx, cancel := context.WithCancel(context.Background())
	g := &gatewayRun{stderr: &testkit.Buffer{}, t: t, cancel: cancel, code: make(chan int, 1)}
	go func() {
		g.code <- cli.Run(ctx, cli.Env{
			Args:   append([]string{"serve", "--http", "127.0.0.1:0"}, args...),
			Stdout: nopWriter{}, Stderr: g.stderr, Executable: exe, Version: "test", Dir: dir, StartupWait: wait,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		})
	}()
	t.Cleanup(func() { g.stop() })
	var m []string
	if !proc.Eventually(30*time.Second, func() bool { m = bannerRE.FindStringSubmatch(g.stderr.String()); return m != nil }) {
		g.stop()
		t.Fatalf("serve printed no banner:\n%s", g.stderr.String())
	}
	g.url, g.base, g.token = m[1]+m[2], m[1], m[3]
	return g
}

// stop cancels serve, waits for it to exit and returns its exit code (-1,
// and the test fails, when it does not stop within 20 seconds).
func (g *gatewayRun) stop() int {
	g.once.Do(func() {
		g.cancel()
		select {
		case g.exit = <-g.code:
		case <-time.After(20 * time.Second):
			g.exit = -1
			g.t.Errorf("serve did not stop:\n%s", g.stderr.String())
		}
	})
	return g.exit
}

// session opens a go-sdk client session to the gateway with its token,
// closed at cleanup.
func (g *gatewayRun) session(t testing.TB, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, g, headerRT{"Authorization", "Bearer " + g.token}, opts)
}

// connect opens a go-sdk client session to the gateway through rt,
// closed at cleanup.
func connect(t testing.TB, g *gatewayRun, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, g, rt, nil)
}

func connectWith(t testing.TB, g *gatewayRun, rt http.RoundTripper, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "observer", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, g.stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// lists reports whether cs's tools/list names the tool name (false when
// the list fails).
func lists(ctx context.Context, cs *mcp.ClientSession, name string) bool {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return false
	}
	for _, tl := range res.Tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}
