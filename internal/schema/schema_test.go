package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// reasonOf returns the Reason of err, "" for nil, and fails the test if
// err is not an *Error.
func reasonOf(t *testing.T, which string, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Which != which {
		t.Errorf("Which = %q, want %q", e.Which, which)
	}
	return e.Reason
}

func TestInputNormalises(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty object", `{}`, `{"type":"object","properties":{}}`},
		{"missing type", `{"properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"missing properties", `{"type":"object"}`, `{"type":"object","properties":{}}`},
		{"missing properties goes after type", `{"description":"d","type":"object","required":[]}`,
			`{"description":"d","type":"object","properties":{},"required":[]}`},
		{"already normal", `{"type":"object","properties":{}}`, `{"type":"object","properties":{}}`},
		{"key order preserved",
			`{"z":1,"type":"object","a":2,"properties":{"y":{},"b":{}},"m":[3,2,1]}`,
			`{"z":1,"type":"object","a":2,"properties":{"y":{},"b":{}},"m":[3,2,1]}`},
		{"type array of object", `{"type":["object"],"properties":{}}`, `{"type":"object","properties":{}}`},
		{"escaped type", `{"type":"\u006fbject","properties":{}}`, `{"type":"object","properties":{}}`},
		{"big numbers preserved",
			`{"type":"object","properties":{"n":{"type":"integer","maximum":123456789012345678901234567890,"minimum":-1e400,"multipleOf":0.10000000000000000000001,"default":1.0}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","maximum":123456789012345678901234567890,"minimum":-1e400,"multipleOf":0.10000000000000000000001,"default":1.0}}}`},
		{"unicode preserved",
			`{"type":"object","description":"héllo \u00e9 😀 \ud83d\ude00 <&> \u2028","properties":{"名前":{"type":"string"}}}`,
			`{"type":"object","description":"héllo \u00e9 😀 \ud83d\ude00 <&> \u2028","properties":{"名前":{"type":"string"}}}`},
		{"whitespace removed, strings kept",
			"{ \"type\" : \"object\" ,\n\t\"description\" : \"a  b\\n\" , \"properties\" : { \"x\" : [ 1 , 2 ] } }\n",
			`{"type":"object","description":"a  b\n","properties":{"x":[1,2]}}`},
		{"unknown keywords kept", `{"x-vendor":{"deep":[{"$ref":"https://evil.example/"}]},"type":"object","properties":{}}`,
			`{"x-vendor":{"deep":[{"$ref":"https://evil.example/"}]},"type":"object","properties":{}}`},
		{"absolute $id", `{"$id":"https://example.com/s.json","$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$id":"https://evil.example/a.json","type":"string"}}}`,
			`{"$id":"https://example.com/s.json","$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$id":"https://evil.example/a.json","type":"string"}}}`},
		{"brackets in strings", `{"description":"[[[[{{{{\"]]}}","type":"object","properties":{}}`,
			`{"description":"[[[[{{{{\"]]}}","type":"object","properties":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Input([]byte(tt.in), Limits{})
			if err != nil {
				t.Fatalf("Input(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Input(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			again, err := Input(got, Limits{})
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("Input is not idempotent: Input(%s) = %s, %v", got, again, err)
			}
		})
	}
}

func TestInputRefs(t *testing.T) {
	accept := []struct{ name, in string }{
		{"root fragment", `{"$ref":"#"}`},
		{"pointer", `{"properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`},
		{"anchor", `{"properties":{"a":{"$ref":"#addr"}},"$defs":{"a":{"$anchor":"addr"}}}`},
		{"escaped hash", `{"properties":{"a":{"$ref":"\u0023/$defs/a"}}}`},
		{"dynamic and recursive", `{"$dynamicRef":"#meta","$recursiveRef":"#","$dynamicAnchor":"meta"}`},
		{"$ref as a property name", `{"properties": {"$ref": {"type":"string"}}}`},
		{"$ref property with a string value", `{"properties":{"$ref":"https://evil.example/x.json"}}`},
		{"$ref as a def name", `{"$defs":{"$ref":{"type":"string"}},"definitions":{"$ref":true}}`},
		{"$ref as a pattern", `{"patternProperties":{"$ref":{}}}`},
		{"$ref in required", `{"properties":{"$ref":{}},"required":["$ref"]}`},
		{"$ref in enum", `{"properties":{"a":{"enum":[{"$ref":"https://evil.example/x.json"}]}}}`},
		{"$ref in const", `{"properties":{"a":{"const":{"$ref":"file:///etc/passwd"}}}}`},
		{"$ref in default", `{"default":{"$ref":"x.json"},"properties":{"a":{"default":{"$ref":5}}}}`},
		{"$ref in examples", `{"examples":[{"$ref":""}]}`},
		{"$ref in dependentRequired", `{"dependentRequired":{"a":["$ref"]}}`},
		{"draft-07 dependencies array", `{"dependencies":{"a":["b","$ref"]}}`},
		{"boolean schemas", `{"additionalProperties":false,"items":true,"properties":{"a":true}}`},
	}
	for _, tt := range accept {
		t.Run("accept/"+tt.name, func(t *testing.T) {
			if _, err := Input([]byte(tt.in), Limits{}); err != nil {
				t.Errorf("Input(%s): %v", tt.in, err)
			}
		})
	}

	const evil = `{"$ref":"https://evil.example/x.json"}`
	reject := []struct{ name, in string }{
		{"root", evil},
		{"url", `{"$ref":"https://evil.example/x.json#/a"}`},
		{"relative file", `{"$ref":"defs.json#/a"}`},
		{"network path", `{"$ref":"//evil.example/x"}`},
		{"empty", `{"$ref":""}`},
		{"number", `{"$ref":5}`},
		{"null", `{"$ref":null}`},
		{"object", `{"$ref":{"a":"#"}}`},
		{"escaped key", `{"\u0024ref":"https://evil.example/"}`},
		{"dynamicRef", `{"$dynamicRef":"https://evil.example/x.json#meta"}`},
		{"recursiveRef", `{"$recursiveRef":"x.json"}`},
		{"in properties", `{"properties":{"a":` + evil + `}}`},
		{"in property named $ref", `{"properties":{"$ref":` + evil + `}}`},
		{"in patternProperties", `{"patternProperties":{"^a":` + evil + `}}`},
		{"in $defs", `{"$defs":{"a":` + evil + `}}`},
		{"in definitions", `{"definitions":{"a":` + evil + `}}`},
		{"in dependentSchemas", `{"dependentSchemas":{"a":` + evil + `}}`},
		{"in dependencies", `{"dependencies":{"a":` + evil + `}}`},
		{"in items", `{"properties":{"a":{"type":"array","items":` + evil + `}}}`},
		{"in draft-07 tuple items", `{"properties":{"a":{"items":[{},` + evil + `]}}}`},
		{"in additionalItems", `{"additionalItems":` + evil + `}`},
		{"in additionalProperties", `{"additionalProperties":` + evil + `}`},
		{"in not", `{"not":` + evil + `}`},
		{"in if", `{"if":` + evil + `}`},
		{"in then", `{"then":` + evil + `}`},
		{"in else", `{"else":` + evil + `}`},
		{"in contains", `{"contains":` + evil + `}`},
		{"in propertyNames", `{"propertyNames":` + evil + `}`},
		{"in unevaluatedItems", `{"unevaluatedItems":` + evil + `}`},
		{"in unevaluatedProperties", `{"unevaluatedProperties":` + evil + `}`},
		{"in contentSchema", `{"contentSchema":` + evil + `}`},
		{"in allOf", `{"allOf":[{"type":"object"},` + evil + `]}`},
		{"in anyOf", `{"anyOf":[` + evil + `]}`},
		{"in oneOf", `{"oneOf":[` + evil + `]}`},
		{"in prefixItems", `{"prefixItems":[` + evil + `]}`},
		{"in allOf given as an object", `{"allOf":` + evil + `}`},
		{"in nested array of allOf", `{"allOf":[[` + evil + `]]}`},
		{"in properties given as an array", `{"properties":{"a":{"properties":[` + evil + `]}}}`},
		{"deep", `{"properties":{"a":{"items":{"anyOf":[{"properties":{"b":{"not":{"$defs":{"c":` + evil + `}}}}}]}}}}`},
		{"beside data", `{"properties":{"a":{"enum":[1],"$ref":"x.json"}}}`},
	}
	for _, tt := range reject {
		t.Run("reject/"+tt.name, func(t *testing.T) {
			_, err := Input([]byte(tt.in), Limits{})
			if got := reasonOf(t, WhichInput, err); got != ReasonRemoteRef {
				t.Errorf("Input(%s) reason = %q (%v), want %q", tt.in, got, err, ReasonRemoteRef)
			}
		})
	}
}

func TestRemoteRefDetail(t *testing.T) {
	_, err := Input([]byte(`{"properties":{"a/b":{"items":{"$ref":"https://evil.example/x.json"}}}}`), Limits{})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := `$ref "https://evil.example/x.json" is not a local fragment (at "/properties/a~1b/items/$ref")`
	if e.Detail != want {
		t.Errorf("Detail = %s\nwant %s", e.Detail, want)
	}
	if !strings.Contains(e.Error(), "inputSchema") || !strings.Contains(e.Error(), "remote_ref") {
		t.Errorf("Error() = %q, want it to name the schema and the reason", e.Error())
	}
}

func TestInputRejects(t *testing.T) {
	small := Limits{MaxDepth: 4, MaxBytes: 64, MaxSubschemas: 3}
	tests := []struct {
		name   string
		in     string
		limits Limits
		want   string
	}{
		{"nil", "", Limits{}, ReasonMissing},
		{"null", "null", Limits{}, ReasonMissing},
		{"spaced null", " \n null\t", Limits{}, ReasonMissing},
		{"whitespace", "   ", Limits{}, ReasonMissing},

		{"truncated", `{"type":"object"`, Limits{}, ReasonInvalidJSON},
		{"trailing comma", `{"type":"object",}`, Limits{}, ReasonInvalidJSON},
		{"trailing garbage", `{} x`, Limits{}, ReasonInvalidJSON},
		{"two values", `{}{}`, Limits{}, ReasonInvalidJSON},
		{"single quotes", `{'type':'object'}`, Limits{}, ReasonInvalidJSON},
		{"bad utf-8", "{\"description\":\"\xff\"}", Limits{}, ReasonInvalidJSON},
		{"unbalanced", `{]`, Limits{}, ReasonInvalidJSON},
		{"duplicate type", `{"type":"object","type":"string"}`, Limits{}, ReasonInvalidJSON},
		{"duplicate escaped", `{"$ref":"#","\u0024ref":"https://evil.example/"}`, Limits{}, ReasonInvalidJSON},
		{"duplicate property", `{"properties":{"a":{},"a":{"type":"string"}}}`, Limits{}, ReasonInvalidJSON},
		{"duplicate nested", `{"properties":{"a":{"type":"string","type":"number"}}}`, Limits{}, ReasonInvalidJSON},

		{"array", `[]`, Limits{}, ReasonNotObject},
		{"string", `"object"`, Limits{}, ReasonNotObject},
		{"boolean schema", `true`, Limits{}, ReasonNotObject},
		{"number", `42`, Limits{}, ReasonNotObject},
		{"type string", `{"type":"string"}`, Limits{}, ReasonNotObject},
		{"type nullable", `{"type":["object","null"]}`, Limits{}, ReasonNotObject},
		{"type twice", `{"type":["object","object"]}`, Limits{}, ReasonNotObject},
		{"type empty array", `{"type":[]}`, Limits{}, ReasonNotObject},
		{"type null", `{"type":null}`, Limits{}, ReasonNotObject},
		{"type object", `{"type":{"const":"object"}}`, Limits{}, ReasonNotObject},

		{"properties array", `{"type":"object","properties":[]}`, Limits{}, ReasonInvalidSchema},
		{"properties null", `{"properties":null}`, Limits{}, ReasonInvalidSchema},

		{"deep", `{"a":{"b":{"c":{"d":{}}}}}`, Limits{MaxDepth: 4}, ReasonTooDeep},
		{"deep arrays", `[[[[[]]]]]`, small, ReasonTooDeep},
		{"deep after normalisation", `{}`, Limits{MaxDepth: 1}, ReasonTooDeep},
		{"large", `{"description":"` + strings.Repeat("x", 64) + `"}`, small, ReasonTooLarge},
		{"large raw", `{` + strings.Repeat(" ", 4*64) + `}`, small, ReasonTooLarge},
		{"large after normalisation", `{"description":"` + strings.Repeat("x", 20) + `"}`, small, ReasonTooLarge},
		{"many objects", `{"a":{},"b":{},"c":{}}`, small, ReasonTooManySubschemas},
		{"many objects after normalisation", `{}`, Limits{MaxSubschemas: 1}, ReasonTooManySubschemas},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Input([]byte(tt.in), tt.limits)
			if got := reasonOf(t, WhichInput, err); got != tt.want {
				t.Errorf("Input(%s) = %s, reason %q (%v); want %q", tt.in, out, got, err, tt.want)
			}
			if out != nil {
				t.Errorf("Input(%s) returned %s with an error", tt.in, out)
			}
		})
	}
}

// Whitespace is not counted against MaxBytes unless there is so much that
// the raw input exceeds four times the limit.
func TestPrettyPrintedWithinLimit(t *testing.T) {
	in := `{"type": "object",` + strings.Repeat(" ", 100) + `"properties": {}}`
	if _, err := Input([]byte(in), Limits{MaxBytes: 40}); err != nil {
		t.Errorf("Input(%d bytes, %d compact) with MaxBytes 40: %v", len(in), len(`{"type":"object","properties":{}}`), err)
	}
}

func TestOutput(t *testing.T) {
	tests := []struct {
		name, in, want string
		reason         string
	}{
		{"nil", "", "", ""},
		{"null", "null", "", ""},
		{"spaced null", " null ", "", ""},
		{"empty object", `{}`, `{"type":"object"}`, ""},
		{"properties not added", `{"type":"object","required":["a"]}`, `{"type":"object","required":["a"]}`, ""},
		{"kept", `{"properties":{"n":{"type":"number","maximum":1e999}},"type":"object"}`,
			`{"properties":{"n":{"type":"number","maximum":1e999}},"type":"object"}`, ""},
		{"type array", `{"type":["object"]}`, `{"type":"object"}`, ""},
		{"not object", `{"type":"array","items":{}}`, "", ReasonNotObject},
		{"array", `[]`, "", ReasonNotObject},
		{"remote ref", `{"properties":{"a":{"$ref":"https://evil.example/"}}}`, "", ReasonRemoteRef},
		{"invalid", `{`, "", ReasonInvalidJSON},
		{"properties not object", `{"properties":"x"}`, "", ReasonInvalidSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw []byte
			if tt.name != "nil" {
				raw = []byte(tt.in)
			}
			out, err := Output(raw, Limits{})
			if got := reasonOf(t, WhichOutput, err); got != tt.reason {
				t.Fatalf("Output(%s) reason = %q (%v), want %q", tt.in, got, err, tt.reason)
			}
			if string(out) != tt.want {
				t.Errorf("Output(%s) = %s, want %s", tt.in, out, tt.want)
			}
			if tt.want == "" && out != nil {
				t.Errorf("Output(%s) = %q, want nil", tt.in, out)
			}
		})
	}
	// Without "properties" added, a depth of 1 is enough.
	if _, err := Output([]byte(`{}`), Limits{MaxDepth: 1, MaxSubschemas: 1}); err != nil {
		t.Errorf("Output({}) with depth 1: %v", err)
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	want := Limits{DefaultMaxDepth, DefaultMaxBytes, DefaultMaxSubschemas}
	if got := (Limits{}).WithDefaults(); got != want {
		t.Errorf("Limits{}.WithDefaults() = %+v, want %+v", got, want)
	}
	if got := (Limits{-1, -1, -1}).WithDefaults(); got != want {
		t.Errorf("negative limits = %+v, want %+v", got, want)
	}
	set := Limits{1, 2, 3}
	if got := set.WithDefaults(); got != set {
		t.Errorf("%+v.WithDefaults() = %+v, want unchanged", set, got)
	}
}

// nested returns n levels of open, the innermost value, and n of close.
func nested(n int, open, inner, close string) []byte {
	return []byte(strings.Repeat(open, n) + inner + strings.Repeat(close, n))
}

func TestVeryDeepRejectedEarly(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   []byte
	}{
		{"objects", nested(10000, `{"a":`, `{}`, `}`)},
		{"arrays", nested(10000, `[`, ``, `]`)},
		{"arrays with whitespace", nested(10000, "[ \n", ``, "] ")},
		{"million arrays", nested(1000000, `[`, ``, `]`)},
		{"unclosed", nested(1000000, `[`, ``, ``)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := Limits{MaxBytes: 64 << 20}.WithDefaults()
			_, err := Input(tt.in, l)
			if got := reasonOf(t, WhichInput, err); got != ReasonTooDeep {
				t.Fatalf("reason = %q (%v), want %q", got, err, ReasonTooDeep)
			}
			// The scan stops at the first level too many: it must not
			// have read more than that prefix.
			st, _ := scan(tt.in, l)
			if st.Size > 10*(DefaultMaxDepth+1) {
				t.Errorf("scan read %d significant bytes before stopping; want it to stop at depth %d", st.Size, DefaultMaxDepth+1)
			}
		})
	}
}

// Brackets inside strings are text, however many there are.
func TestBracketsInStringsAreNotDepth(t *testing.T) {
	in := `{"description":"` + strings.Repeat(`[{\"`, 10000) + `","type":"object","properties":{}}`
	if _, err := Input([]byte(in), Limits{}); err != nil {
		t.Errorf("Input: %v", err)
	}
}

func TestHugeRejectedWithoutScanning(t *testing.T) {
	// All '[': a scan would call this too_deep, so too_large shows the
	// size check came first.
	huge := bytes.Repeat([]byte{'['}, 100<<20)
	var err error
	allocs := testing.AllocsPerRun(1, func() { _, err = Input(huge, Limits{}) })
	if got := reasonOf(t, WhichInput, err); got != ReasonTooLarge {
		t.Fatalf("reason = %q (%v), want %q", got, err, ReasonTooLarge)
	}
	if allocs > 10 {
		t.Errorf("rejecting allocated %v times; want only the error", allocs)
	}
	if _, err := Output(huge, Limits{}); reasonOf(t, WhichOutput, err) != ReasonTooLarge {
		t.Errorf("Output: %v, want too_large", err)
	}
}

// A document of significant bytes beyond MaxBytes, hidden behind enough
// whitespace to pass the raw check, is stopped by the scan.
func TestCompactSizeStopsScan(t *testing.T) {
	l := Limits{MaxBytes: 1000}.WithDefaults()
	in := []byte(`{"description":"` + strings.Repeat("x", 2000) + `"}`)
	st, err := scan(in, l)
	if err == nil || err.Reason != ReasonTooLarge {
		t.Fatalf("scan: %v, want too_large", err)
	}
	if st.Size != l.MaxBytes+1 {
		t.Errorf("scan stopped after %d bytes, want %d", st.Size, l.MaxBytes+1)
	}
}

// The realistic schema of the benchmark must pass, unchanged.
func TestRealisticSchema(t *testing.T) {
	for _, in := range [][]byte{realistic, bigSchema(100 << 10)} {
		got, err := Input(in, Limits{})
		if err != nil {
			t.Fatalf("Input: %v", err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, in); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, c.Bytes()) {
			t.Errorf("Input changed a normal schema:\n got %.200s\nwant %.200s", got, c.Bytes())
		}
	}
}
