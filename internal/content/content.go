// Package content projects MCP results to text for a model or a terminal.
//
// The projection never drops anything silently: text is kept as text;
// images, audio and blobs become one line naming their type and size;
// resource links become their URI; structured content is shown as JSON
// unless a text block already carries the same value; and a content type
// this package does not know becomes an explicit diagnostic line.
//
// It works on the raw JSON of a result, so it also handles results that
// go-sdk cannot decode.
package content

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// block is a content block with every field this package reads.
type block struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Data     string          `json:"data"`
	MIMEType string          `json:"mimeType"`
	URI      string          `json:"uri"`
	Name     string          `json:"name"`
	Resource *resourceBody   `json:"resource"`
	raw      json.RawMessage // the whole block
}

type resourceBody struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     string `json:"blob"`
}

// ToolText projects a tools/call result object.
func ToolText(raw json.RawMessage) string {
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Sprintf("[unreadable result: %v]", err)
	}
	var lines []string
	var texts []string
	for _, rb := range res.Content {
		var b block
		if err := json.Unmarshal(rb, &b); err != nil {
			lines = append(lines, fmt.Sprintf("[unreadable content block: %v]", err))
			continue
		}
		b.raw = rb
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
		lines = append(lines, blockLine(b))
	}
	if s := res.StructuredContent; len(s) > 0 && !bytes.Equal(bytes.TrimSpace(s), []byte("null")) && !carried(s, texts) {
		lines = append(lines, "structured content: "+compact(s))
	}
	return strings.Join(lines, "\n")
}

// carried reports whether the text blocks already carry the structured
// value: one of them is that JSON (go-sdk and others add it so), or every
// scalar in it appears in the text (a server that renders its result as
// prose). Otherwise the JSON is added, so nothing is lost.
func carried(structured json.RawMessage, texts []string) bool {
	want := compact(structured)
	for _, t := range texts {
		if compact(json.RawMessage(t)) == want {
			return true
		}
	}
	var v any
	if len(texts) == 0 || json.Unmarshal(structured, &v) != nil {
		return false
	}
	all := strings.Join(texts, "\n")
	n := 0
	ok := true
	var walk func(any)
	walk = func(v any) {
		if !ok || n > 256 {
			ok = false // too big to check cheaply: show it
			return
		}
		n++
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			ok = x == "" || (len(x) >= 3 && strings.Contains(all, x)) || containsToken(all, x)
		case float64:
			ok = containsToken(all, strconv.FormatFloat(x, 'f', -1, 64))
		case bool:
			ok = containsToken(all, strconv.FormatBool(x))
		}
	}
	walk(v)
	return ok
}

// containsToken reports whether tok occurs in s not glued to a letter,
// digit or '.' on either side ("21" is not found in "121" or "2.21").
func containsToken(s, tok string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], tok)
		if j < 0 || tok == "" {
			return false
		}
		start, end := i+j, i+j+len(tok)
		if (start == 0 || !wordByte(s[start-1])) && (end == len(s) || !wordByte(s[end])) {
			return true
		}
		i = start + 1
	}
}

func wordByte(b byte) bool {
	return b == '.' || b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

func blockLine(b block) string {
	switch b.Type {
	case "text":
		return b.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %s]", b.Type, orUnknown(b.MIMEType), size(decodedLen(b.Data)))
	case "resource_link":
		if b.Name != "" && b.Name != b.URI {
			return fmt.Sprintf("[resource link: %s (%s)]", b.URI, b.Name)
		}
		return fmt.Sprintf("[resource link: %s]", b.URI)
	case "resource":
		if b.Resource == nil {
			return "[embedded resource without contents]"
		}
		return resourceLine(b.Resource.URI, b.Resource.MIMEType, b.Resource.Text, b.Resource.Blob)
	case "":
		return fmt.Sprintf("[content block without a type, %s of JSON]", size(len(b.raw)))
	}
	return fmt.Sprintf("[unsupported content type %q, %s of JSON]", b.Type, size(len(b.raw)))
}

func resourceLine(uri, mime, text, blob string) string {
	if blob == "" {
		return text
	}
	return fmt.Sprintf("[resource %s %s, %s]", uri, orUnknown(mime), size(decodedLen(blob)))
}

// ResourceText projects a resources/read result.
func ResourceText(res *mcp.ReadResourceResult) string {
	var lines []string
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if len(c.Blob) > 0 {
			lines = append(lines, fmt.Sprintf("[resource %s %s, %s]", c.URI, orUnknown(c.MIMEType), size(len(c.Blob))))
			continue
		}
		lines = append(lines, c.Text)
	}
	return strings.Join(lines, "\n")
}

// PromptText projects a prompts/get result as "role: text" lines.
func PromptText(res *mcp.GetPromptResult) string {
	var lines []string
	if res.Description != "" {
		lines = append(lines, "# "+res.Description)
	}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		raw, err := json.Marshal(m.Content)
		text := ""
		if err != nil {
			text = fmt.Sprintf("[unreadable content: %v]", err)
		} else {
			var b block
			if err := json.Unmarshal(raw, &b); err != nil {
				text = fmt.Sprintf("[unreadable content: %v]", err)
			} else {
				b.raw = raw
				text = blockLine(b)
			}
		}
		lines = append(lines, string(m.Role)+": "+text)
	}
	return strings.Join(lines, "\n")
}

func decodedLen(b64 string) int {
	return max(0, base64.StdEncoding.DecodedLen(len(b64))-strings.Count(b64[max(0, len(b64)-2):], "="))
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

// size formats a byte count for people and models: bytesize.Format.
func size(n int) string { return bytesize.Format(int64(n)) }
