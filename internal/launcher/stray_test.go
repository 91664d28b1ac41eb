//go:build unix

package launcher

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var strayCases = []struct {
	line string
	msg  bool
}{
	{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", true},
	{`{"result":{"tools":[]},"jsonrpc":"2.0","id":1}` + "\n", true}, // the TypeScript SDK's member order
	{`{"\u006asonrpc":"2.0","id":1,"result":{}}` + "\n", true},      // an escaped key, as go-sdk decodes it
	{`[{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\n", true},
	{"\n", true},
	{"\r\n", true},
	{"Weather MCP Server running on stdio\n", false},
	{"[dotenv@16.4.5] injecting env (0) from .env\n", false},
	{`{"level":"info","body":"started"}` + "\n", false},
	{`{"level":"info","body":"sent \"jsonrpc\": 2.0"}` + "\n", false},
	{`{"a\u0062":1}` + "\n", false},
	{`["not", "a", "batch"]` + "\n", false},
	{"[INFO] jsonrpc ready\n", false},
	{`{oops` + "\n", false},
	{"null\n", false},
	{`"jsonrpc"` + "\n", false},
}

func TestIsMessage(t *testing.T) {
	for _, c := range strayCases {
		if got := isMessage([]byte(c.line)); got != c.msg {
			t.Errorf("isMessage(%q) = %v, want %v", c.line, got, c.msg)
		}
	}
	// Long lines, "jsonrpc" near either end or in the middle.
	pad := strings.Repeat("x", 500)
	for _, c := range []struct {
		line string
		msg  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"text":"` + pad + `"}}`, true},
		{`{"result":{"text":"` + pad + `"},"jsonrpc":"2.0","id":1}`, true},
		{`{"result":{"text":"` + pad + `"},"jsonrpc":"2.0","id":1,"other":"` + pad + `"}`, true},
		{`{"level":"info","msg":"` + pad + `"}`, false},
	} {
		if got := isMessage([]byte(c.line + "\n")); got != c.msg {
			t.Errorf("isMessage(%.60q…) = %v, want %v", c.line, got, c.msg)
		}
	}
}

// FuzzIsMessage holds isMessage to its one promise: a line that go-sdk
// decodes as a JSON-RPC message is never taken for a stray line.
func FuzzIsMessage(f *testing.F) {
	for _, c := range strayCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(bytes.TrimRight(line, "\r\n"), '\n') >= 0 {
			return // one line at a time, as the reader hands them over
		}
		if isMessage(line) {
			return
		}
		if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line)); err == nil {
			t.Fatalf("isMessage(%q) = false, but go-sdk decodes it as %T", line, msg)
		}
	})
}

// BenchmarkIsMessage measures the check every stdout line pays: a 100 KB
// tool result in the TypeScript SDK's member order, where "jsonrpc" comes
// after the result.
func BenchmarkIsMessage(b *testing.B) {
	text := bytes.Repeat([]byte("lorem ipsum dolor sit amet "), 100<<10/27)
	line := append(append([]byte(`{"result":{"content":[{"type":"text","text":"`), text...), `"}]},"jsonrpc":"2.0","id":7}`+"\n"...)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !isMessage(line) {
			b.Fatal("not a message")
		}
	}
}
