package mcphttp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peekRef is peekBody written with encoding/json, for comparison: exact
// keys, the last of a repeated key, a member of the wrong type ignored.
func peekRef(body []byte) peek {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return peek{}
	}
	p := peek{id: top["id"]}
	json.Unmarshal(top["method"], &p.method)
	var params, meta map[string]json.RawMessage
	json.Unmarshal(top["params"], &params)
	json.Unmarshal(params["_meta"], &meta)
	json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &p.metaVersion)
	present := func(v json.RawMessage) bool { return v != nil && !bytes.Equal(v, []byte("null")) }
	p.progress = present(meta["progressToken"])
	p.logLevel = present(meta[mcp.MetaKeyLogLevel])
	return p
}

func TestPeekBody(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20)
	tests := []struct {
		name string
		body string
		want peek
	}{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
			peek{id: json.RawMessage(`7`), method: "tools/call"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, peek{method: "notifications/initialized"}},
		{"modern with progress", `{"id":"a","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}}}`,
			peek{id: json.RawMessage(`"a"`), method: "tools/call", metaVersion: "2026-07-28", progress: true}},
		{"null token and log level", `{"id":1,"method":"m","params":{"_meta":{"progressToken":null,"io.modelcontextprotocol/logLevel":"debug"}}}`,
			peek{id: json.RawMessage(`1`), method: "m", logLevel: true}},
		{"escaped key and value", `{"id":1,"m\u0065thod":"tools\/call"}`, peek{id: json.RawMessage(`1`), method: "tools/call"}},
		{"keys match exactly", `{"ID":1,"Method":"x"}`, peek{}},
		{"last repeated key", `{"method":"a","method":"b"}`, peek{method: "b"}},
		{"method not a string", `{"method":5,"id":2}`, peek{id: json.RawMessage(`2`)}},
		{"last repeated method not a string", `{"method":"0","method":[]}`, peek{}},
		{"last repeated params without _meta", `{"method":"m","params":{"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"params":{}}`, peek{method: "m"}},
		{"last repeated _meta not an object", `{"params":{"_meta":{"io.modelcontextprotocol/logLevel":"debug"},"_meta":1}}`, peek{}},
		{"last repeated version not a string", `{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":1}}}`, peek{}},
		{"batch", `[{"id":1,"method":"m"}]`, peek{}},
		{"garbage", `{"id":1,"method":"m"`, peek{}},
		{"trailing", `{"id":1} {}`, peek{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := peekBody([]byte(tt.body))
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(peek{})); diff != "" {
				t.Errorf("peekBody (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(peekRef([]byte(tt.body)), got, cmp.AllowUnexported(peek{})); diff != "" {
				t.Errorf("peekBody differs from encoding/json (-json +peekBody):\n%s", diff)
			}
		})
	}
	// Arguments of a megabyte are skipped, not decoded.
	body := append(append([]byte(`{"id":1,"method":"tools/call","params":{"arguments":{"text":"`), big...), `"}}}`...)
	if allocs := testing.AllocsPerRun(5, func() { peekBody(body) }); allocs > 2 {
		t.Errorf("peekBody of a 1 MiB call allocates %.0f times, want at most 2", allocs)
	}
}

func FuzzPeekBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"id":"a","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}}}`,
		`{"id":1,"m\u0065thod":"tools\/call","params":{"_meta":{"io.modelcontextprotocol/logLevel":null}}}`,
		`{"method":"a","method":"b","params":[]}`, `[1]`, `null`, `{"method":"\ud800"}`, "{\"method\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if diff := cmp.Diff(peekRef(body), peekBody(body), cmp.AllowUnexported(peek{})); diff != "" {
			t.Errorf("%q: (-encoding/json +peekBody):\n%s", body, diff)
		}
	})
}
