package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// post sends one raw JSON-RPC message of the 2026-07-28 era (version "" for
// none) and returns the response.
func post(t *testing.T, url, method, version string, params map[string]any, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if version != "" {
		meta, _ := params["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[mcp.MetaKeyProtocolVersion] = version
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": "raw", "version": "1"}
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{}
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if uri, ok := params["uri"].(string); ok {
		req.Header.Set("Mcp-Name", uri)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestHTTPWire checks the modern era's HTTP rules on the raw wire.
func TestHTTPWire(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	const v = "2026-07-28"
	tests := []struct {
		name     string
		method   string
		version  string
		params   map[string]any
		hdr      map[string]string
		status   int
		ctype    string // prefix
		contains []string
	}{
		{"discover", "server/discover", v, nil, nil, 200, "application/json",
			[]string{`"ttlMs":300000`, `"cacheScope":"public"`, `"resultType":"complete"`, `"io.modelcontextprotocol/serverInfo"`, `"test-server"`}},
		{"tools/list", "tools/list", v, nil, nil, 200, "application/json", []string{`"ttlMs":300000`, `"cacheScope":"public"`}},
		{"read default cache", "resources/read", v, map[string]any{"uri": "test://readme"}, nil, 200, "application/json", []string{`"ttlMs":0`, `"cacheScope":"private"`, `"resultType":"complete"`}},
		{"read template", "resources/read", v, map[string]any{"uri": "test://users/7"}, nil, 200, "application/json", []string{`"resultType":"complete"`, `{\"id\":7}`}},
		{"read resource cache", "resources/read", v, map[string]any{"uri": "test://logo"}, nil, 200, "application/json", []string{`"ttlMs":60000`, `"cacheScope":"public"`}},
		{"call json", "tools/call", v, map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, nil, 200, "application/json", []string{`"text":"hi"`}},
		{"progress upgrades to SSE", "tools/call", v, map[string]any{"name": "progress", "_meta": map[string]any{"progressToken": "p1"}}, nil, 200, "text/event-stream",
			[]string{"notifications/progress", "step 3", `"reported"`}},
		{"unknown method", "nope/nope", v, nil, nil, 404, "application/json", []string{"-32601"}},
		{"ping removed", "ping", v, nil, nil, 404, "application/json", []string{"-32601"}},
		{"unsupported version", "tools/list", "2099-01-01", nil, nil, 400, "application/json", []string{"-32022", `"supported"`, `"2026-07-28"`, `"2025-11-25"`}},
		{"version header disagrees with _meta", "tools/list", "v999.0.0", nil, map[string]string{"Mcp-Protocol-Version": v}, 400, "application/json", []string{"-32020"}},
		{"name header mismatch", "tools/call", v, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]string{"Mcp-Name": "other"}, 400, "application/json", []string{"-32020"}},
		{"base64 name header", "tools/call", v, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]string{"Mcp-Name": "=?base64?ZWNobw==?="}, 200, "application/json", []string{`"text":"x"`}},
		{"unknown tool", "tools/call", v, map[string]any{"name": "nope"}, nil, 400, "application/json", []string{"-32602"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, url, tt.method, tt.version, tt.params, tt.hdr)
			if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.ctype) {
				t.Fatalf("status %d %q, want %d %q; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.ctype, body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(body, c) {
					t.Errorf("body lacks %s: %s", c, body)
				}
			}
		})
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		for _, hdr := range []map[string]string{{"Mcp-Protocol-Version": v}, {}} {
			req, _ := http.NewRequest(m, url, nil)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %v: status %d, want 405", m, hdr, resp.StatusCode)
			}
		}
	}
}

// TestLegacyOnly checks that a server restricted to legacy versions
// answers modern requests with a plain 400, so a go-sdk client falls back.
func TestLegacyOnly(t *testing.T) {
	url := serveHTTP(t, testServer(&Options{ProtocolVersions: []string{"2025-11-25", "2025-06-18"}}))
	resp, body := post(t, url, "server/discover", "2026-07-28", nil, nil)
	if resp.StatusCode != 400 || strings.Contains(body, "jsonrpc") {
		t.Errorf("status %d body %q, want plain 400", resp.StatusCode, body)
	}
	cs := connect(t, url, "", nil)
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %q, want fallback to 2025-11-25", got)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Error(err)
	}
}

// TestPagination checks the default page size of 100.
func TestPagination(t *testing.T) {
	s := New("many", "1", nil)
	for i := range 150 {
		MustAddTool(s, Tool{Name: fmt.Sprintf("t%03d", i), Description: "A tool."}, func(context.Context, noArgs) (Content, error) { return nil, nil })
	}
	for _, era := range eras {
		cs := connect(t, serveHTTP(t, s), era.version, nil)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 100 || res.NextCursor == "" {
			t.Fatalf("%s: first page %d tools, cursor %q", era.name, len(res.Tools), res.NextCursor)
		}
		res, err = cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: res.NextCursor})
		if err != nil || len(res.Tools) != 50 || res.NextCursor != "" {
			t.Fatalf("%s: second page %v %d %q", era.name, err, len(res.Tools), res.NextCursor)
		}
	}
	if _, err := connect(t, serveHTTP(t, s), "", nil).ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "garbage"}); err == nil || rpcCode(err) == 0 {
		t.Errorf("bad cursor: %v (code must not be 0)", err)
	}
}

// TestStdio runs the test binary as a stdio server whose tool prints to
// stdout, and checks that the protocol stream survives, in both eras, and
// that the stray output reaches stderr.
func TestStdio(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stderr strings.Builder
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childVar+"=1")
			cmd.Stderr = &stderr
			c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != era.want {
				t.Errorf("negotiated %q, want %q", got, era.want)
			}
			for i := range 3 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "stray", Arguments: map[string]any{"text": fmt.Sprint(i)}})
				if err != nil || text(res) != fmt.Sprintf("clean %d", i) {
					t.Fatalf("call %d: %v %v", i, err, res)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
			if err != nil {
				t.Fatal(err)
			}
			var who whoamiOut
			json.Unmarshal([]byte(text(res)), &who)
			if who.Modern != (era.name == "modern") || who.Header != "" {
				t.Errorf("whoami over stdio: %+v", who)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://users/7"}); err != nil {
				t.Error(err)
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if !strings.Contains(stderr.String(), "stray output from a handler 2") || !strings.Contains(stderr.String(), `"id":999`) {
				t.Errorf("stray output not on stderr: %q", stderr.String())
			}
			if rawStdoutRedirected && (!strings.Contains(stderr.String(), "raw write to fd 1 2") || !strings.Contains(stderr.String(), `"id":998`)) {
				t.Errorf("raw writes to fd 1 not on stderr: %q", stderr.String())
			}
		})
	}
}

// TestStdioStream runs the test binary as a stdio server and reads its
// raw stdout: every line the server writes while serving must be a
// JSON-RPC response, although the handler writes to stdout with
// fmt.Println and (on Linux) with raw writes to file descriptor 1; and
// once ServeStdio returns, stdout is the real one again (the child then
// prints "stdout restored").
func TestStdioStream(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childVar+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	lines := bufio.NewScanner(stdout)
	const calls = 3
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"stray","arguments":{"text":"%d"},%s}}`+"\n", i, i, meta)
		if !lines.Scan() {
			t.Fatalf("call %d: stdout ended: %v; stderr %q", i, lines.Err(), stderr.String())
		}
		msg, err := jsonrpc.DecodeMessage(lines.Bytes())
		if err != nil {
			t.Fatalf("call %d: protocol stream corrupted: %q: %v", i, lines.Text(), err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.ID.Raw() != int64(i) || resp.Error != nil || !strings.Contains(string(resp.Result), fmt.Sprintf(`"clean %d"`, i)) {
			t.Fatalf("call %d: got %s, want the answer to call %d", i, lines.Text(), i)
		}
	}
	stdin.Close() // the client leaves: ServeStdio returns
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v; stderr %q", err, stderr.String())
	}
	if diff := cmp.Diff([]string{"stdout restored"}, rest); diff != "" {
		t.Errorf("stdout after serving (-want +got):\n%s", diff)
	}
	for i := 1; i <= calls; i++ {
		want := []string{fmt.Sprintf("stray output from a handler %d", i)}
		if rawStdoutRedirected {
			want = append(want, fmt.Sprintf("raw write to fd 1 %d", i))
		}
		for _, w := range want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("stderr lacks %q: %q", w, stderr.String())
			}
		}
	}
}

// TestSwapStdout checks the portable redirection in-process: stray
// writes go to the stray writer while serving, and *out is restored
// afterwards.
func TestSwapStdout(t *testing.T) {
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	var stray strings.Builder
	out := outW
	s := New("x", "1", nil)
	MustAddTool(s, Tool{Name: "p", Description: "Reports progress."}, func(context.Context, noArgs) (Content, error) {
		fmt.Fprintln(out, "stray")
		return Text("ok"), nil
	})
	protocol, restore, err := swapStdout(&out, &stray)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.serveOn(context.Background(), inR, protocol) }()
	lines := bufio.NewScanner(outR)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"p",` + meta + `}}` + "\n"))
	if !lines.Scan() {
		t.Fatal(lines.Err())
	}
	msg, err := jsonrpc.DecodeMessage(lines.Bytes())
	if err != nil {
		t.Fatalf("protocol stream corrupted: %q: %v", lines.Text(), err)
	}
	if resp, ok := msg.(*jsonrpc.Response); !ok || !strings.Contains(string(resp.Result), `"ok"`) {
		t.Errorf("response %s", lines.Text())
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if out != outW {
		t.Error("stdout not restored")
	}
	if stray.String() != "stray\n" {
		t.Errorf("stray = %q", stray.String())
	}
}
