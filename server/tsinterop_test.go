package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
)

// The pinned TypeScript SDK clients (scripts/peers-install.sh), relative to
// the peers directory.
const (
	tsModules = "tsclient/node_modules"
	tsSDKv1   = tsModules + "/@modelcontextprotocol/sdk/package.json"
	tsSDKv2   = tsModules + "/@modelcontextprotocol/client/package.json"
)

// tsReport is what testdata/tsinterop.mjs prints.
type tsReport struct {
	SDK                        string               `json:"sdk"`
	SDKVersion                 string               `json:"sdkVersion"`
	ProtocolVersion            string               `json:"protocolVersion"`
	ServerName                 string               `json:"serverName"`
	Tools                      []string             `json:"tools"`
	AddNumbersOutput           []string             `json:"addNumbersOutput"`
	AddNumbersInputDescription string               `json:"addNumbersInputDescription"`
	Calls                      map[string]tsCall    `json:"calls"`
	Templates                  []string             `json:"templates"`
	Reads                      map[string]tsContent `json:"reads"`
	Prompt                     []string             `json:"prompt"`
	Errors                     []string             `json:"errors"`
}

type tsCall struct {
	Text       string `json:"text,omitempty"`
	Structured any    `json:"structured,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	Thrown     bool   `json:"thrown,omitempty"`
	Code       int64  `json:"code,omitempty"`
}

type tsContent struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// TestTSInterop runs the official TypeScript SDK clients from npm (v1,
// @modelcontextprotocol/sdk, which speaks the 2025 era; v2,
// @modelcontextprotocol/client, which also speaks 2026-07-28) against the
// test server over Streamable HTTP (served by Serve) and over stdio (this
// test binary re-executed, see TestMain), and checks what they saw: typed
// results with structuredContent (objects and wrapped non-objects), raw
// content, tool errors, the error code of an unknown tool, fixed and
// template resources, and a prompt. Over stdio a tool also writes to
// stdout, which must not disturb the client.
func TestTSInterop(t *testing.T) {
	node, v1 := peers.Script(t, tsSDKv1)
	peers.Script(t, tsSDKv2)
	modules := filepath.Join(strings.TrimSuffix(v1, filepath.FromSlash(tsSDKv1)), tsModules)
	script, err := filepath.Abs(filepath.Join("testdata", "tsinterop.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- testServer(nil).ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addr <- a })
	}()
	url := "http://" + (<-addr).String() + DefaultPath
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	runs := []struct {
		sdk, transport, negotiation string
		version                     string // negotiated
	}{
		{"v1", "http", "legacy", "2025-11-25"},
		{"v1", "stdio", "legacy", "2025-11-25"},
		{"v2", "http", "pin", "2026-07-28"},
		{"v2", "stdio", "pin", "2026-07-28"},
		{"v2", "http", "legacy", "2025-11-25"},
		{"v2", "stdio", "legacy", "2025-11-25"},
	}
	for _, run := range runs {
		t.Run(strings.Join([]string{run.sdk, run.transport, run.negotiation}, "/"), func(t *testing.T) {
			got := runTSClient(t, node, script, modules, url, run.sdk, run.transport, run.negotiation)
			want := wantTSReport(run.transport == "stdio")
			want.SDK, want.SDKVersion, want.ProtocolVersion = run.sdk, got.SDKVersion, run.version
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}

// wantTSReport is what a client must see of testServer.
func wantTSReport(stdio bool) *tsReport {
	r := &tsReport{
		ServerName:                 "test-server",
		Tools:                      []string{"add_numbers", "ask", "block", "count", "doc", "echo", "fail", "image", "liar", "progress", "stray", "whoami", "words"},
		AddNumbersOutput:           []string{"sum"},
		AddNumbersInputDescription: "first",
		Calls: map[string]tsCall{
			"add_numbers":     {Text: `{"sum":5}`, Structured: map[string]any{"sum": 5.0}},
			"count":           {Text: `4`, Structured: map[string]any{"result": 4.0}},
			"words":           {Text: `["a","b","c"]`, Structured: map[string]any{"result": []any{"a", "b", "c"}}},
			"doc":             {Text: `{"content":"x<y"}`, Structured: map[string]any{"content": "x<y"}},
			"echo":            {Text: "hi"},
			"fail":            {Text: "wrapped: plain failure", IsError: true},
			"add_numbers_bad": {Text: "invalid arguments", IsError: true}, // prefix, see runTSClient
			"no_such_tool":    {Thrown: true, Code: jsonrpc.CodeInvalidParams},
		},
		Templates: []string{"test://files/{+path}", "test://tags/{tag}", "test://users/{id}"},
		Reads: map[string]tsContent{
			"test://readme":        {URI: "test://readme", MIMEType: "text/plain", Text: "read me"},
			"test://users/me":      {URI: "test://users/me", MIMEType: "text/plain", Text: "the current user"},
			"test://users/42":      {URI: "test://users/42", MIMEType: "application/json", Text: `{"id":42}`},
			"test://files/a/b.txt": {URI: "test://files/a/b.txt", MIMEType: "text/plain", Text: "path=a/b.txt"},
			"test://logo":          {URI: "test://logo", MIMEType: "image/png", Blob: "iVBORw=="},
		},
		Prompt: []string{"user: hello Ada hello Ada "},
		Errors: []string{},
	}
	if stdio {
		r.Calls["stray"] = tsCall{Text: "clean from ts"}
	}
	return r
}

// runTSClient runs testdata/tsinterop.mjs and decodes its report.
func runTSClient(t *testing.T, node, script, modules, url, sdk, transport, negotiation string) *tsReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, sdk, transport, negotiation)
	cmd.Env = append(os.Environ(),
		"TSCLIENT_MODULES="+modules,
		"SERVER_URL="+url,
		"SERVER_COMMAND="+os.Args[0],
		"SERVER_CHILD_ENV="+childVar,
		"NODE_NO_WARNINGS=1",
	)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(script), err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("stderr:\n%s", stderr.String())
	}
	var r tsReport
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	// The validation message is the server's own wording; its start is
	// what matters.
	if c, ok := r.Calls["add_numbers_bad"]; ok && strings.HasPrefix(c.Text, "invalid arguments") {
		c.Text = "invalid arguments"
		r.Calls["add_numbers_bad"] = c
	}
	return &r
}
