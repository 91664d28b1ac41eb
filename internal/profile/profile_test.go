package profile

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"mcp", MCP, false},
		{"openai", OpenAI, false},
		{"OpenAI", OpenAI, false},
		{" gemini ", Gemini, false},
		{"openai-responses", OpenAIResponses, false},
		{"anthropic", Anthropic, false},
		{"claude", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := ParseFormat(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := Convert("yaml", nil); err == nil {
		t.Error("Convert with an unknown format succeeded")
	}
}

var schemaObj = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)

// TestNamesRoundTrip: every converted name fits the provider, is unique,
// and resolves back to its original.
func TestNamesRoundTrip(t *testing.T) {
	long := strings.Repeat("a", 200)
	sets := []struct {
		name  string
		names []string
	}{
		{"valid", []string{"get_weather", "list-files", "A1"}},
		{"colliding after sanitising", []string{"get.weather", "get:weather", "get weather", "get_weather", "get/weather"}},
		{"over-long", []string{long, long + "b", long + "c", strings.Repeat("b", 64), strings.Repeat("b", 65)}},
		{"200-char with a shared 63-char prefix", []string{strings.Repeat("x", 63) + "1", strings.Repeat("x", 63) + "2", strings.Repeat("x", 200)}},
		{"unicode", []string{"検索", "検索2", "поиск", "🔍", "café", "cafe"}},
		{"odd", []string{"", "_", "-", "1", "1abc", "-abc", "a.b.c", " "}},
		{"a valid name equal to a fitted one", []string{"a.b", fitted("a.b", ruleOpenAI, hashLen), "b:c", fitted("b:c", ruleOpenAI, hashLen) + "x"}},
	}
	rules := map[Format]nameRule{OpenAI: ruleOpenAI, OpenAIResponses: ruleOpenAI, Anthropic: ruleAnthropic, Gemini: ruleGemini}
	for _, s := range sets {
		for f, rule := range rules {
			t.Run(s.name+"/"+string(f), func(t *testing.T) {
				tools := make([]Tool, len(s.names))
				for i, n := range s.names {
					tools[i] = Tool{Name: n, InputSchema: schemaObj}
				}
				res, err := Convert(f, tools)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]string{}
				for _, n := range s.names {
					pn, ok := res.Mapping.Name(n)
					if !ok {
						t.Fatalf("no name for %q", n)
					}
					if !rule.valid(pn) {
						t.Errorf("%q → %q, which %s rejects", n, pn, f)
					}
					if rule.valid(n) && pn != n {
						t.Errorf("valid name %q changed to %q", n, pn)
					}
					if prev, dup := seen[pn]; dup {
						t.Errorf("%q and %q both → %q", prev, n, pn)
					}
					seen[pn] = n
					orig, args, err := res.Mapping.Resolve(pn, json.RawMessage(`{"q":"x"}`))
					if err != nil || orig != n || string(args) != `{"q":"x"}` {
						t.Errorf("Resolve(%q) = %q, %s, %v; want %q", pn, orig, args, err, n)
					}
				}
				if errs := checkTools(f, res.Tools); len(errs) > 0 {
					t.Error(errsString(errs))
				}
			})
		}
	}
}

func TestNamesStable(t *testing.T) {
	// A renamed tool keeps its name when other tools come and go.
	a, err := Convert(Gemini, []Tool{{Name: "a.b"}, {Name: "1x"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Convert(Gemini, []Tool{{Name: "zz"}, {Name: "a.b"}, {Name: "a:b"}})
	if err != nil {
		t.Fatal(err)
	}
	na, _ := a.Mapping.Name("a.b")
	nb, _ := b.Mapping.Name("a.b")
	if na != nb || na != "a_b_"+fitted("a.b", ruleGemini, hashLen)[4:] {
		t.Errorf("a.b → %q and %q", na, nb)
	}
}

// A key repeated in one object of a schema is refused, named with its
// path: readers disagree about which of the two counts.
func TestDuplicateKeys(t *testing.T) {
	_, err := Convert(OpenAI, []Tool{{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{},"a":{"type":"string"}}}`)}})
	if err == nil || !strings.Contains(err.Error(), `duplicate key "a" at $.properties.a`) {
		t.Errorf("Convert: %v", err)
	}
}

func TestDuplicateNames(t *testing.T) {
	if _, err := Convert(OpenAI, []Tool{{Name: "x"}, {Name: "x"}}); err == nil {
		t.Error("duplicate names accepted")
	}
}

func TestResolveUnknown(t *testing.T) {
	res, err := Convert(Anthropic, []Tool{{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := res.Mapping.Resolve("b", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Resolve(unknown) error = %v, want ErrUnknownTool", err)
	}
	var zero Mapping
	if _, _, err := zero.Resolve("a", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("zero Mapping: error = %v", err)
	}
}

// TestArgumentsPassThrough: the JSON Schema formats never change argument
// shape, so Resolve returns the very bytes, even for schemas it rewrote.
func TestArgumentsPassThrough(t *testing.T) {
	tools := loadTools(t)
	args := []string{``, `null`, `{}`, `{"a-b": {"$ref": 1}, "x": [1, 2.50, "é"]}`, ` {"q" : "spaced"} `, `not json`}
	for _, f := range []Format{MCP, OpenAI, OpenAIResponses, Anthropic} {
		res, err := Convert(f, tools)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			pn, _ := res.Mapping.Name(tool.Name)
			for _, a := range args {
				orig, got, err := res.Mapping.Resolve(pn, json.RawMessage(a))
				if err != nil || orig != tool.Name || string(got) != a {
					t.Errorf("%s: Resolve(%q, %q) = %q, %q, %v", f, pn, a, orig, got, err)
				}
			}
		}
	}
}

func TestGeminiArguments(t *testing.T) {
	schema := `{"type":"object","properties":{
		"page-size":{"type":"integer"},
		"page_size":{"type":"integer"},
		"filter":{"type":"object","properties":{"$eq":{"type":"string"},"ok":{"type":"boolean"}}},
		"meta":{"type":"object","additionalProperties":{"type":"string"}},
		"items":{"type":"array","items":{"type":"object","properties":{"a.b":{}}}},
		"tags":{"type":"array"},
		"plain":{"type":"string"}
	}}`
	res, err := Convert(Gemini, []Tool{
		{Name: "t", InputSchema: json.RawMessage(schema)},
		{Name: "m", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":true}`)},
		{Name: "none", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var decl struct {
		Parameters struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(res.Tools[0], &decl); err != nil {
		t.Fatal(err)
	}
	// "page_size" is valid and keeps its name; "page-size" gets a hashed one.
	var renamed string
	for k := range decl.Parameters.Properties {
		if strings.HasPrefix(k, "page_size_") {
			renamed = k
		}
	}
	if renamed == "" {
		t.Fatalf("no renamed page-size in %s", res.Tools[0])
	}
	tests := []struct {
		name, tool, args, want string
	}{
		{"renames back", "t", `{"` + renamed + `":5,"page_size":6}`, `{"page-size":5,"page_size":6}`},
		{"nested rename", "t", `{"filter":{"_eq":"x","ok":true}}`, `{"filter":{"$eq":"x","ok":true}}`},
		{"free-form object decoded", "t", `{"meta":"{\"k\":\"v\",\"n\":1.50}"}`, `{"meta":{"k":"v","n":1.50}}`},
		{"array element renames and decodes", "t", `{"items":[{"a_b":"[1,2]"},{"a_b":"not json"}]}`, `{"items":[{"a.b":[1,2]},{"a.b":"not json"}]}`},
		{"array without items: elements decoded", "t", `{"tags":["\"x\"","{}","7"]}`, `{"tags":["x",{},7]}`},
		{"wrong shapes pass through", "t", `{"filter":"x","meta":{"already":"object"},"items":{},"plain":"{}"}`, `{"filter":"x","meta":{"already":"object"},"items":{},"plain":"{}"}`},
		{"unknown keys kept", "t", `{"zzz":1}`, `{"zzz":1}`},
		{"wrapped map", "m", `{"arguments":"{\"a\":1,\"b\":[true]}"}`, `{"a":1,"b":[true]}`},
		{"wrapped map, missing", "m", `{}`, `{}`},
		{"empty args", "t", ``, ``},
		{"null args", "t", `null`, `null`},
		{"no parameters", "none", `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig, got, err := res.Mapping.Resolve(tt.tool, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if orig != tt.tool {
				t.Errorf("orig = %q", orig)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":`} {
		if _, _, err := res.Mapping.Resolve("t", json.RawMessage(bad)); err == nil {
			t.Errorf("Resolve(t, %s) accepted", bad)
		}
	}
}

// TestSchemaCases converts single schemas and compares the result.
func TestSchemaCases(t *testing.T) {
	tests := []struct {
		name, in, openai, gemini string
	}{
		{
			name:   "empty object",
			in:     `{"type":"object"}`,
			openai: `{"type":"object","properties":{}}`,
			gemini: ``,
		},
		{
			name:   "no type",
			in:     `{"properties":{"a":{"type":"string"}}}`,
			openai: `{"type":"object","properties":{"a":{"type":"string"}}}`,
			gemini: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`,
		},
		{
			name:   "ref with sibling description",
			in:     `{"type":"object","properties":{"a":{"$ref":"#/$defs/s","description":"mine"}},"$defs":{"s":{"type":"string","description":"theirs"}}}`,
			openai: `{"type":"object","properties":{"a":{"type":"string","description":"mine"}}}`,
			gemini: `{"type":"OBJECT","properties":{"a":{"type":"STRING","description":"mine"}}}`,
		},
		{
			name:   "ref to a property, and an unresolvable ref",
			in:     `{"type":"object","properties":{"a":{"type":"integer"},"b":{"$ref":"#/properties/a"},"c":{"$ref":"#/$defs/missing"}}}`,
			openai: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"description":"Any JSON value (a reference that could not be resolved (#/$defs/missing))."}}}`,
			gemini: `{"type":"OBJECT","properties":{"a":{"type":"INTEGER"},"b":{"type":"INTEGER"},"c":{"type":"STRING","description":"Any JSON value (a reference that could not be resolved (#/$defs/missing)). A JSON value, encoded as a string."}}}`,
		},
		{
			name:   "root recursion",
			in:     `{"type":"object","properties":{"next":{"$ref":"#"}}}`,
			openai: `{"type":"object","properties":{"next":{"type":"object","properties":{"next":{"type":"object","properties":{"next":{"description":"Any JSON value (a recursive reference (#) not expanded further)."}}}}}}}`,
			gemini: `{"type":"OBJECT","properties":{"next":{"type":"OBJECT","properties":{"next":{"type":"OBJECT","properties":{"next":{"type":"STRING","description":"Any JSON value (a recursive reference (#) not expanded further). A JSON value, encoded as a string."}}}}}}}`,
		},
		{
			name:   "top-level anyOf merged, required intersected",
			in:     `{"type":"object","anyOf":[{"properties":{"a":{"type":"string"},"c":{"type":"string"}},"required":["a","c"]},{"properties":{"b":{"type":"string"},"c":{"type":"number"}},"required":["b","c"]}]}`,
			openai: `{"type":"object","properties":{"a":{"type":"string"},"c":{"type":"string"},"b":{"type":"string"}},"required":["c"]}`,
			gemini: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"c":{"type":"STRING"},"b":{"type":"STRING"}},"required":["c"]}`,
		},
		{
			name:   "nested combinators kept for openai, flattened for gemini",
			in:     `{"type":"object","properties":{"v":{"oneOf":[{"type":"string","enum":["a"]},{"type":"string","enum":["b","a"]}]},"n":{"type":["number","null"]},"x":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
			openai: `{"type":"object","properties":{"v":{"oneOf":[{"type":"string","enum":["a"]},{"type":"string","enum":["b","a"]}]},"n":{"type":["number","null"]},"x":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
			gemini: `{"type":"OBJECT","properties":{"v":{"type":"STRING","enum":["a","b"]},"n":{"type":"NUMBER","nullable":true},"x":{"type":"STRING","description":"A JSON value, encoded as a string."}}}`,
		},
		{
			name:   "arrays and tuples",
			in:     `{"type":"object","properties":{"a":{"type":"array"},"t":{"type":"array","items":[{"type":"string"},{"type":"string"}]},"p":{"type":"array","prefixItems":[{"type":"integer"}],"minItems":1}}}`,
			openai: `{"type":"object","properties":{"a":{"type":"array","items":{}},"t":{"type":"array","items":[{"type":"string"},{"type":"string"}]},"p":{"type":"array","items":{},"prefixItems":[{"type":"integer"}],"minItems":1}}}`,
			gemini: `{"type":"OBJECT","properties":{"a":{"type":"ARRAY","items":{"type":"STRING","description":"A JSON value, encoded as a string."}},"t":{"type":"ARRAY","items":{"type":"STRING"}},"p":{"type":"ARRAY","items":{"type":"INTEGER"},"minItems":1}}}`,
		},
		{
			name:   "dropped and kept keywords",
			in:     `{"type":"object","$schema":"x","$id":"urn:x","properties":{"s":{"type":"string","title":"S","format":"email","pattern":"^.+$","minLength":1,"default":"a","examples":["a"]},"i":{"type":"integer","format":"int64","minimum":0,"exclusiveMaximum":9,"const":3},"f":false},"required":["s","gone"]}`,
			openai: `{"type":"object","properties":{"s":{"type":"string","title":"S","format":"email","pattern":"^.+$","minLength":1,"default":"a","examples":["a"]},"i":{"type":"integer","format":"int64","minimum":0,"exclusiveMaximum":9,"const":3},"f":false},"required":["s","gone"]}`,
			gemini: `{"type":"OBJECT","properties":{"s":{"type":"STRING","description":"S. Format: email.","minLength":1},"i":{"type":"INTEGER","format":"int64","description":"Allowed values: 3.","minimum":0}},"required":["s"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(encode(jsonSchemaParams(root))); got != tt.openai {
				t.Errorf("openai:\n got %s\nwant %s", got, tt.openai)
			}
			root, _ = decode([]byte(tt.in))
			p, _ := geminiParams(root)
			got := ""
			if p != nil {
				got = string(encode(p))
			}
			if got != tt.gemini {
				t.Errorf("gemini:\n got %s\nwant %s", got, tt.gemini)
			}
		})
	}
}

// TestInlineBudget: definitions that each use the next one twice would
// inline to 2^30 nodes; the budget cuts them and the result still passes.
func TestInlineBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := 0; i < 30; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		next := `{"type":"string"}`
		if i < 29 {
			next = `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		}
		b.WriteString(`"d` + strconv.Itoa(i) + `":{"type":"object","properties":{"l":` + next + `,"r":` + next + `}}`)
	}
	b.WriteString(`}}`)
	for _, f := range []Format{OpenAI, Anthropic, Gemini} {
		res, err := Convert(f, []Tool{{Name: "deep", InputSchema: json.RawMessage(b.String())}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Tools[0]); n > 2<<20 {
			t.Errorf("%s: %d bytes", f, n)
		}
		if errs := checkTools(f, res.Tools); len(errs) > 0 {
			t.Errorf("%s: %s", f, errsString(errs))
		}
	}
}

func TestMCPIdentity(t *testing.T) {
	res, err := Convert(MCP, []Tool{
		{Name: "a.b", Title: "T", Description: "D", InputSchema: json.RawMessage(`{ "type": "object", "$defs": {} }`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"name":"a.b","title":"T","description":"D","inputSchema":{"type":"object","$defs":{}},"outputSchema":{"type":"object"}}`,
		`{"name":"c","inputSchema":{"type":"object"}}`,
	}
	for i, w := range want {
		if string(res.Tools[i]) != w {
			t.Errorf("tool %d = %s, want %s", i, res.Tools[i], w)
		}
	}
	if _, err := Convert(MCP, []Tool{{Name: "x", InputSchema: json.RawMessage(`{`)}}); err == nil {
		t.Error("invalid schema accepted")
	}
}

// TestGeminiUnionRoundTrip: a property whose branches have different
// kinds becomes JSON in a string for Gemini, and every branch's value
// comes back as it was.
func TestGeminiUnionRoundTrip(t *testing.T) {
	res, err := Convert(Gemini, []Tool{{Name: "t", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"array","items":{"type":"string"}}]}}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{`{"x":"5"}`, `{"x":5}`},
		{`{"x":"[\"a\",\"b\"]"}`, `{"x":["a","b"]}`},
		{`{"x":"\"quoted\""}`, `{"x":"quoted"}`},
		{`{"x":"plain words"}`, `{"x":"plain words"}`}, // not JSON: passed on as the string it is
	}
	for _, tt := range tests {
		_, got, err := res.Mapping.Resolve("t", json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Resolve(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestNamespaceName: a server name that fits OpenAI's rule is kept, one
// that does not is fitted with a hash, so two such names stay apart.
func TestNamespaceName(t *testing.T) {
	if got := NamespaceName("github"); got != "github" {
		t.Errorf("NamespaceName(github) = %q", got)
	}
	a, b := NamespaceName("my.server"), NamespaceName("my:server")
	if a == b || !ruleOpenAI.valid(a) || !ruleOpenAI.valid(b) {
		t.Errorf("NamespaceName: %q and %q", a, b)
	}
}
