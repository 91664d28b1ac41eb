package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
)

// peerServer returns a stdio config entry for an npm peer.
func peerServer(t *testing.T, rel string, args []string, env map[string]string) map[string]any {
	node, script := peers.Script(t, rel)
	s := map[string]any{"command": node, "args": append([]string{script}, args...), "startupTimeoutMs": 30000}
	if env != nil {
		s["env"] = env
	}
	return s
}

// checkEverything exercises server-everything through the host: every tool
// listed, several called (text, numbers, image, structured content, resource
// links, progress), a resource and a template instance read, a prompt.
func checkEverything(t *testing.T, h *host.Host, name string) {
	t.Helper()
	st := status(h, name)
	if st.State != host.StateReady {
		t.Fatalf("%s: %s: %s\n%s", name, st.State, st.LastError, st.Stderr)
	}
	if st.Tools < 13 || st.Resources < 7 || st.Templates < 2 || st.Prompts < 4 {
		t.Errorf("%s counts: %d tools, %d resources, %d templates, %d prompts", name, st.Tools, st.Resources, st.Templates, st.Prompts)
	}
	tools := map[string]bool{}
	for _, tl := range h.Tools() {
		if tl.Server == name {
			tools[tl.Name] = true
		}
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "get-structured-content", "get-resource-links", "trigger-long-running-operation"} {
		if !tools[name+"__"+want] {
			t.Errorf("%s: tool %s missing from %v", name, want, tools)
		}
	}
	if got := call(t, h, name+"__echo", `{"message":"hello"}`).Text; got != "Echo: hello" {
		t.Errorf("echo = %q", got)
	}
	if got := call(t, h, name+":get-sum", `{"a":2,"b":40}`).Text; !strings.Contains(got, "42") {
		t.Errorf("get-sum = %q", got)
	}
	if got := call(t, h, name+"__get-tiny-image", `{}`).Text; !strings.Contains(got, "[image image/png") {
		t.Errorf("get-tiny-image = %q", got)
	}
	res := call(t, h, name+"__get-structured-content", `{"location":"Chicago"}`)
	var sc struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if json.Unmarshal(res.Raw, &sc); sc.StructuredContent["temperature"] == nil {
		t.Errorf("get-structured-content raw = %s", res.Raw)
	}
	if got := call(t, h, name+"__get-resource-links", `{"count":2}`).Text; strings.Count(got, "[resource link: ") != 2 {
		t.Errorf("get-resource-links = %q", got)
	}
	var reports atomic.Int32
	res, err := h.Call(context.Background(), name+"__trigger-long-running-operation", json.RawMessage(`{"duration":1,"steps":2}`),
		&host.CallOptions{Progress: func(host.Progress) { reports.Add(1) }})
	if err != nil || res.IsError || reports.Load() != 2 {
		t.Errorf("long-running operation: %v, %v, %d progress reports (want 2)", res, err, reports.Load())
	}
	r, err := h.ReadResource(context.Background(), name+":demo://resource/static/document/architecture.md")
	if err != nil || len(r.Text) == 0 {
		t.Errorf("read static resource: %v", err)
	}
	r, err = h.ReadResource(context.Background(), name+":demo://resource/dynamic/text/7")
	if err != nil || !strings.Contains(r.Text, "7") {
		t.Errorf("read template instance: %v %v", r, err)
	}
	p, err := h.GetPrompt(context.Background(), name+":args-prompt", map[string]string{"city": "Paris"}, nil)
	if err != nil || !strings.Contains(p.Text, "Paris") {
		t.Errorf("args-prompt: %v %v", p, err)
	}

	// The same through the capability tools, as a model would.
	var resources struct {
		Resources []host.Resource `json:"resources"`
	}
	structured(t, call(t, h, host.ListResources, `{"server":"`+name+`"}`), &resources)
	if len(resources.Resources) < 7 {
		t.Errorf("mcp_list_resources: %d resources", len(resources.Resources))
	}
	var templates struct {
		Templates []host.Template `json:"resourceTemplates"`
	}
	structured(t, call(t, h, host.ListTemplates, `{"server":"`+name+`"}`), &templates)
	filled := ""
	for _, tm := range templates.Templates {
		if strings.Contains(tm.URITemplate, "dynamic/text/{") {
			filled = tm.ID[:strings.Index(tm.ID, "{")] + "7"
		}
	}
	if filled == "" {
		t.Fatalf("no text template among %+v", templates.Templates)
	}
	if res := call(t, h, host.ReadResourceTool, `{"id":"`+filled+`"}`); !strings.Contains(res.Text, "7") {
		t.Errorf("mcp_read_resource %s = %q", filled, res.Text)
	}
	if res := call(t, h, host.GetPromptTool, `{"id":"`+name+`:args-prompt","arguments":{"city":"Paris"}}`); !strings.Contains(res.Text, "Paris") {
		t.Errorf("mcp_get_prompt = %q", res.Text)
	}
}

func TestPeerEverythingStdio(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{"everything": peerServer(t, peers.Everything, []string{"stdio"}, nil)}, nil))
	checkEverything(t, h, "everything")
	if v := status(h, "everything").ProtocolVersion; v != "2025-11-25" {
		t.Errorf("protocol = %s; server-everything (TS SDK 1.x) speaks 2025-11-25", v)
	}
}

func TestPeerEverythingHTTP(t *testing.T) {
	t.Parallel()
	node, script := peers.Script(t, peers.Everything)
	port := freePort(t)
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h := open(t, parse(t, map[string]any{"everything": map[string]any{"type": "http", "url": "http://" + addr + "/mcp", "trust": "trusted"}}, nil))
	checkEverything(t, h, "everything")
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestPeerFilesystem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := open(t, parse(t, map[string]any{"fs": peerServer(t, peers.Filesystem, []string{dir}, nil)}, nil))
	if st := status(h, "fs"); st.State != host.StateReady || st.Tools < 10 {
		t.Fatalf("fs: %+v", st)
	}
	if got := call(t, h, "fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "hello.txt"))).Text; got != "hello from disk" {
		t.Errorf("read_text_file = %q", got)
	}
	call(t, h, "fs__write_file", fmt.Sprintf(`{"path":%q,"content":"written"}`, filepath.Join(dir, "new.txt")))
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("write_file: %q, %v", b, err)
	}
	if got := call(t, h, "fs__list_directory", fmt.Sprintf(`{"path":%q}`, dir)).Text; !strings.Contains(got, "hello.txt") || !strings.Contains(got, "new.txt") {
		t.Errorf("list_directory = %q", got)
	}
	// Outside the allowed directory: the server refuses, as a tool error.
	if res := call(t, h, "fs__read_text_file", `{"path":"/etc/hostname"}`); !res.IsError {
		t.Errorf("reading outside the root succeeded: %q", res.Text)
	}
}

func TestPeerMemory(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	h := open(t, parse(t, map[string]any{"memory": peerServer(t, peers.Memory, nil, map[string]string{"MEMORY_FILE_PATH": file})}, nil))
	if st := status(h, "memory"); st.State != host.StateReady || st.Tools < 9 {
		t.Fatalf("memory: %+v", st)
	}
	call(t, h, "memory__create_entities", `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}`)
	if got := call(t, h, "memory__read_graph", `{}`).Text; !strings.Contains(got, "wrote the first program") {
		t.Errorf("read_graph = %q", got)
	}
	if got := call(t, h, "memory__search_nodes", `{"query":"Ada"}`).Text; !strings.Contains(got, "person") {
		t.Errorf("search_nodes = %q", got)
	}
}
