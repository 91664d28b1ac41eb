package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// realistic is a compact ~2 KB input schema of the kind an issue-tracker
// server advertises: descriptions, enums, formats, nested objects, $defs
// and local references.
var realistic = compact(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "title": "create_issue",
  "description": "Create a new issue in a repository. Requires push access for labels, milestones and assignees.",
  "properties": {
    "owner": {"type": "string", "description": "Repository owner (user or organisation)", "minLength": 1, "maxLength": 39, "pattern": "^[A-Za-z0-9-]+$"},
    "repo": {"type": "string", "description": "Repository name", "minLength": 1, "maxLength": 100},
    "title": {"type": "string", "description": "Issue title", "minLength": 1, "maxLength": 256},
    "body": {"type": "string", "description": "Issue body, in GitHub-flavoured Markdown", "maxLength": 65536},
    "assignees": {"type": "array", "description": "Logins of users to assign", "items": {"type": "string"}, "maxItems": 10, "uniqueItems": true},
    "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}, "default": []},
    "milestone": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "description": "Milestone number, or null for none"},
    "type": {"type": "string", "enum": ["bug", "feature", "task", "question"], "default": "task"},
    "priority": {"type": "integer", "minimum": 0, "maximum": 4, "default": 2, "examples": [0, 2]},
    "due": {"type": "string", "format": "date", "description": "Due date (YYYY-MM-DD)"},
    "estimate": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.25, "description": "Estimate in days"},
    "links": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "url": {"type": "string", "format": "uri"},
          "relation": {"type": "string", "enum": ["blocks", "blocked_by", "duplicates", "relates_to"]}
        },
        "required": ["url", "relation"],
        "additionalProperties": false
      }
    },
    "metadata": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 256}, "propertyNames": {"pattern": "^[a-z_]+$"}},
    "notify": {"type": "boolean", "default": true, "description": "Notify watchers"}
  },
  "required": ["owner", "repo", "title"],
  "additionalProperties": false,
  "$defs": {
    "label": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 50},
        "color": {"type": "string", "pattern": "^[0-9a-f]{6}$", "description": "Hex colour without the leading #"}
      },
      "required": ["name"]
    }
  }
}`)

func compact(s string) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// bigSchema returns a compact object schema of about n bytes: many
// properties, each a small nested schema, as a large API wrapper might emit.
func bigSchema(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; b.Len() < n-300; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%10 == 0 {
			fmt.Fprintf(&b, `"ref_%d":{"$ref":"#/$defs/common"},`, i)
		}
		fmt.Fprintf(&b, `"field_%d":{"type":"array","description":"Field number %d of the request, with a description of the length that generated API wrappers tend to copy from their documentation.","items":{"type":"string","enum":["alpha","beta","gamma","delta"],"maxLength":%d},"default":["alpha"]}`, i, i, i+1)
	}
	b.WriteString(`},"$defs":{"common":{"type":"object","properties":{"id":{"type":"integer"}}}},"required":["field_0"]}`)
	return b.Bytes()
}

func benchmarkInput(b *testing.B, in []byte) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Input(in, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInput2KB(b *testing.B)   { benchmarkInput(b, realistic) }
func BenchmarkInput100KB(b *testing.B) { benchmarkInput(b, bigSchema(100<<10)) }
