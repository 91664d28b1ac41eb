package content

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolText(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"text", `{"content":[{"type":"text","text":"hi"},{"type":"text","text":"there"}]}`, "hi\nthere"},
		{"image", `{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}`, "[image image/png, 8 bytes]"},
		{"audio without mime", `{"content":[{"type":"audio","data":"AAAA"}]}`, "[audio of unknown type, 3 bytes]"},
		{"link", `{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`, "[resource link: file:///a (a)]"},
		{"link same name", `{"content":[{"type":"resource_link","uri":"x://y","name":"x://y"}]}`, "[resource link: x://y]"},
		{"embedded text", `{"content":[{"type":"resource","resource":{"uri":"x://y","text":"body"}}]}`, "body"},
		{"embedded blob", `{"content":[{"type":"resource","resource":{"uri":"x://y","mimeType":"application/pdf","blob":"AAAA"}}]}`, "[resource x://y application/pdf, 3 bytes]"},
		{"unknown type", `{"content":[{"type":"hologram","frames":3}]}`, `[unsupported content type "hologram", 30 bytes of JSON]`},
		{"no type", `{"content":[{"text":"x"}]}`, "[content block without a type, 12 bytes of JSON]"},
		{"structured only", `{"content":[],"structuredContent":{"a": 1}}`, `structured content: {"a":1}`},
		{"structured carried", `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`, `{"a":1}`},
		{"structured as prose", `{"content":[{"type":"text","text":"hello from disk"}],"structuredContent":{"content":"hello from disk"}}`, "hello from disk"},
		{"structured adds values", `{"content":[{"type":"text","text":"Sunny in Paris"}],"structuredContent":{"city":"Paris","temp":21.5}}`, "Sunny in Paris\nstructured content: {\"city\":\"Paris\",\"temp\":21.5}"},
		{"structured number not glued", `{"content":[{"type":"text","text":"it is 121 today"}],"structuredContent":{"t":21}}`, "it is 121 today\nstructured content: {\"t\":21}"},
		{"structured number as word", `{"content":[{"type":"text","text":"it is 21 today"}],"structuredContent":{"t":21,"note":""}}`, "it is 21 today"},
		{"structured null", `{"content":[{"type":"text","text":"x"}],"structuredContent":null}`, "x"},
		{"not an object", `[1]`, "[unreadable result: json: cannot unmarshal array into Go value of type struct { Content []json.RawMessage \"json:\\\"content\\\"\"; StructuredContent json.RawMessage \"json:\\\"structuredContent\\\"\" }]"},
		{"bad block", `{"content":[7]}`, "[unreadable content block: json: cannot unmarshal number into Go value of type content.block]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ToolText(json.RawMessage(tt.raw)); got != tt.want {
				t.Errorf("ToolText = %q\nwant        %q", got, tt.want)
			}
		})
	}
}

func TestResourceAndPromptText(t *testing.T) {
	r := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: "a://t", Text: "hello"},
		{URI: "a://b", MIMEType: "image/png", Blob: make([]byte, 2048)},
		nil,
	}}
	if got, want := ResourceText(r), "hello\n[resource a://b image/png, 2 KiB]"; got != want {
		t.Errorf("ResourceText = %q, want %q", got, want)
	}
	p := &mcp.GetPromptResult{Description: "Review", Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: "look"}},
		{Role: "assistant", Content: &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
	}}
	if got, want := PromptText(p), "# Review\nuser: look\nassistant: [image image/png, 3 bytes]"; got != want {
		t.Errorf("PromptText = %q, want %q", got, want)
	}
}

func FuzzToolText(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"hi"}]}`)
	f.Add(`{"content":[{"type":"image","data":"=","mimeType":""}],"structuredContent":1}`)
	f.Fuzz(func(t *testing.T, raw string) {
		ToolText(json.RawMessage(raw)) // must not panic
	})
}
