//go:build unix

package launcher

import (
	"bytes"
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
