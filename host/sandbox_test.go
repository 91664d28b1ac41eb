package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// sandboxed returns entry with the default sandbox, and nothing granted
// beyond its defaults and extra.
func sandboxed(entry map[string]any, extra map[string]any) map[string]any {
	sb := map[string]any{"mode": "on"}
	for k, v := range extra {
		sb[k] = v
	}
	entry["sandbox"] = sb
	return entry
}

// requireSandbox fails unless name runs with the protections of the
// default sandbox that this machine offers, its files among them.
func requireSandbox(t *testing.T, h *host.Host, name string) *host.SandboxStatus {
	t.Helper()
	st := status(h, name)
	if st.State != host.StateReady {
		t.Fatalf("%s: %s: %s\n%s", name, st.State, st.LastError, st.Stderr)
	}
	sb := st.Sandbox
	if sb == nil || !sb.Started {
		t.Fatalf("%s: sandbox %+v, want the status of a start", name, sb)
	}
	if runtime.GOOS == "linux" && (sb.Mode != "on" || !slices.Contains(sb.InForce, "files")) {
		t.Fatalf("%s: sandbox %+v, want on with its files confined", name, sb)
	}
	return sb
}

// TestPeersWorkSandboxed: the npm servers (everything, filesystem with one
// allowed directory, memory) and the demo server work in the default
// sandbox, and the ones that need no network run without one.
func TestPeersWorkSandboxed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	memDir := t.TempDir()
	cfg := parse(t, map[string]any{
		"everything": sandboxed(peerServer(t, peers.Everything, []string{"stdio"}, nil), nil),
		"fs":         sandboxed(peerServer(t, peers.Filesystem, []string{dir}, nil), nil),
		"memory": sandboxed(peerServer(t, peers.Memory, nil, map[string]string{"MEMORY_FILE_PATH": filepath.Join(memDir, "memory.jsonl")}),
			map[string]any{"write": []string{memDir}}),
		"demo": sandboxed(map[string]any{"command": self(t), "args": []string{"demo-server"}}, nil),
	}, nil)
	h := open(t, cfg)

	checkEverything(t, h, "everything")
	requireSandbox(t, h, "everything")

	if got := call(t, h, "fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "hello.txt"))).Text; got != "hello from disk" {
		t.Errorf("read_text_file = %q", got)
	}
	call(t, h, "fs__write_file", fmt.Sprintf(`{"path":%q,"content":"written"}`, filepath.Join(dir, "new.txt")))
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("write_file: %q, %v", b, err)
	}
	if sb := requireSandbox(t, h, "fs"); runtime.GOOS == "linux" && sb.Network != "off" {
		t.Errorf("fs: network %q, want off (the filesystem server needs none)", sb.Network)
	}

	call(t, h, "memory__create_entities", `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}`)
	if got := call(t, h, "memory__read_graph", `{}`).Text; !strings.Contains(got, "wrote the first program") {
		t.Errorf("read_graph = %q", got)
	}
	requireSandbox(t, h, "memory")

	if got := call(t, h, "demo__echo", `{"text":"hi"}`).Text; !strings.Contains(got, "hi") {
		t.Errorf("demo echo = %q", got)
	}
	requireSandbox(t, h, "demo")
}

// TestSandboxLimitIsAFinding: a hostile server killed at its memory limit
// is reported as a finding, and its status counts the kill.
func TestSandboxLimitIsAFinding(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux only")
	}
	cfg := parse(t, map[string]any{
		"h": sandboxed(map[string]any{"command": self(t), "env": hostile.ChildEnv(hostile.ModeEscape)}, map[string]any{"memoryMb": 128}),
	}, nil)
	h := open(t, cfg)
	sb := requireSandbox(t, h, "h")
	if !slices.Contains(sb.InForce, "memory") {
		t.Skipf("no memory limit here: %+v", sb.Missing)
	}
	if _, err := h.Call(context.Background(), "h__attempt", json.RawMessage(`{"what":"alloc","mb":4096}`), nil); err == nil {
		t.Fatal("allocating 4 GiB under a 128 MiB limit succeeded")
	}
	var found bool
	proc.WaitGone(t, 20*time.Second, func() bool {
		for _, f := range status(h, "h").Findings {
			found = found || f.Kind == "sandbox_limit"
		}
		return found
	})
	if st := status(h, "h").Sandbox; st == nil || st.OOMKills == 0 || !strings.Contains(st.Summary, "limits reached") {
		t.Errorf("status %+v, want the kill counted", st)
	}
}
