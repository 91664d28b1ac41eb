package codemode

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTypeOf: JSON Schemas written as TypeScript types.
func TestTypeOf(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"string"}`, `string`},
		{`{"type":"integer"}`, `number`},
		{`{"type":["string","null"]}`, `string|null`},
		{`{"enum":["a","b",1]}`, `"a"|"b"|1`},
		{`{"const":"x"}`, `"x"`},
		{`{"type":"array","items":{"type":"number"}}`, `number[]`},
		{`{"type":"array","items":{"anyOf":[{"type":"number"},{"type":"string"}]}}`, `(number|string)[]`},
		{`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"},"my-key":{"type":"boolean"}},"required":["b"]}`, `{b:string;a?:number;"my-key"?:boolean}`},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, `Record<string,string>`},
		{`{"type":"object"}`, `Record<string,any>`},
		{`{"type":"object","properties":{},"additionalProperties":false}`, `{}`},
		{`{"$ref":"#/$defs/x"}`, `any`},
		{`{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}}}`, `any[][][][][]`},
		{`not json`, `any`},
	} {
		if got := typeOf(json.RawMessage(tc.schema), 0); got != tc.want {
			t.Errorf("typeOf(%s) = %s, want %s", tc.schema, got, tc.want)
		}
	}
}

// TestDeclarations: a namespace per server, tools sorted, inputs and
// outputs typed, a tool without an output schema returning its text.
func TestDeclarations(t *testing.T) {
	got := Declarations([]Decl{
		{Tool: Tool{Server: "demo", Name: "echo"}, Description: "Returns the given text unchanged. More words.",
			Input: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		{Tool: Tool{Server: "demo", Name: "add"}, Description: "Adds a and b.",
			Input:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
			Output: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`)},
		{Tool: Tool{Server: "my-fs", Name: "list-dir"}},
	})
	want := `declare namespace demo {
  /** Adds a and b. */
  function add(a: {a:number;b:number}): Promise<{sum:number}>;
  /** Returns the given text unchanged. */
  function echo(a: {text:string}): Promise<string>;
}
declare namespace my_fs {
  function list_dir(a: {}): Promise<string>;
}
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("declarations (-want +got):\n%s", diff)
	}
}

// FuzzTypeOf: any schema writes without panicking.
func FuzzTypeOf(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"enum":[1,"x",null]}}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = typeOf(json.RawMessage(s), 0)
	})
}
