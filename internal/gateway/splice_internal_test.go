package gateway

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSplicedResultJSON: the upstream's members pass as they are, in their
// order; the protocol's _meta keys and resultType are the gateway's own.
func TestSplicedResultJSON(t *testing.T) {
	t.Parallel()
	serverInfo := mcp.Meta{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "switchboard"}}
	tests := []struct {
		name string
		raw  string
		own  *mcp.CallToolResult
		want string
	}{
		{"plain", `{"content":[{"type":"text","text":"hi"}]}`, &mcp.CallToolResult{},
			`{"content":[{"type":"text","text":"hi"}]}`},
		{"unknown members and content types kept, in order", `{"z":1, "content" : [{"type":"hologram","frames":3}],"isError":true,"futureField":{"kept":true}}`,
			&mcp.CallToolResult{IsError: true},
			`{"z":1,"content":[{"type":"hologram","frames":3}],"isError":true,"futureField":{"kept":true}}`},
		{"no content", `{"structuredContent":{"a":1}}`, &mcp.CallToolResult{},
			`{"structuredContent":{"a":1},"content":[]}`},
		{"upstream's protocol meta and resultType dropped", `{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"trace":"t1"}}`,
			&mcp.CallToolResult{},
			`{"content":[],"_meta":{"trace":"t1"}}`},
		{"only protocol meta: no _meta", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`,
			&mcp.CallToolResult{}, `{"content":[]}`},
		{"the gateway's own meta over the upstream's", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"trace":"t1"}}`,
			&mcp.CallToolResult{Meta: serverInfo},
			`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"switchboard"},"trace":"t1"}}`},
		{"null meta", `{"content":[],"_meta":null}`, &mcp.CallToolResult{}, `{"content":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(&splicedResult{CallToolResult: tt.own, raw: json.RawMessage(tt.raw)})
			if err != nil {
				t.Fatal(err)
			}
			// json.Marshal compacts what MarshalJSON returns.
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
