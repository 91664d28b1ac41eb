package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// seeds are inputs worth mutating: normal schemas and each way to fail.
var seeds = []string{
	``, `null`, `{}`, `[]`, `true`, `"object"`,
	`{"type":"object","properties":{}}`,
	`{"type":["object"],"properties":{"a":{"type":"string"}}}`,
	`{"type":"\u006fbject","description":"\ud83d\ude00 é"}`,
	`{"z":1,"type":"object","a":2}`,
	`{"properties":{"$ref":{"type":"string"}}}`,
	`{"properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{}}}`,
	`{"properties":{"a":{"$ref":"https://evil.example/x.json"}}}`,
	`{"allOf":[{"$dynamicRef":"#m"}],"enum":[{"$ref":"x"}]}`,
	`{"type":"object","type":"string"}`,
	`{"n":123456789012345678901234567890,"m":-1e400}`,
	` { "type" : "object" , "properties" : { "x" : [ 1 , { } ] } } `,
	`{"a":"[[[{{{\"\\"}`,
	`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{}}}}}}}}`,
	`[[[[[[[[[[]]]]]]]]]]`,
	// Kept small: the fuzzer minimises every new interesting input for up
	// to a minute, and big seeds breed big inputs.
	`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/b"},"default":[{"$ref":"x"}]}},"$defs":{"b":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a"]}`,
}

// fuzzLimits are small enough that the fuzzer reaches every limit.
var fuzzLimits = Limits{MaxDepth: 6, MaxBytes: 512, MaxSubschemas: 16}

var reasons = map[string]bool{
	ReasonMissing: true, ReasonInvalidJSON: true, ReasonNotObject: true, ReasonInvalidSchema: true,
	ReasonTooDeep: true, ReasonTooLarge: true, ReasonTooManySubschemas: true, ReasonRemoteRef: true,
}

func FuzzInput(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, l := range []Limits{{}, fuzzLimits} {
			checkInput(t, raw, l.WithDefaults())
		}
	})
}

func checkInput(t *testing.T, raw []byte, l Limits) {
	out, err := Input(raw, l)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Which != WhichInput || !reasons[e.Reason] {
			t.Fatalf("Input(%q): bad error %#v", raw, err)
		}
		if out != nil {
			t.Fatalf("Input(%q) returned %q with an error", raw, out)
		}
		return
	}

	if !json.Valid(out) {
		t.Fatalf("Input(%q) = %q, not valid JSON", raw, out)
	}
	var c bytes.Buffer
	json.Compact(&c, out)
	if !bytes.Equal(c.Bytes(), out) {
		t.Fatalf("Input(%q) = %q, not compact", raw, out)
	}
	got := decodeNumbers(t, out)
	if got["type"] != "object" {
		t.Fatalf("Input(%q) = %q, type is %v", raw, out, got["type"])
	}
	if _, ok := got["properties"].(map[string]any); !ok {
		t.Fatalf("Input(%q) = %q, properties is %v", raw, out, got["properties"])
	}
	if st, err := scan(out, l); err != nil || st.Depth > l.MaxDepth || len(out) > l.MaxBytes {
		t.Fatalf("Input(%q) = %q, outside limits %+v: %+v, %v", raw, out, l, st, err)
	}
	again, err := Input(out, l)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("not idempotent: Input(%q) = %q, %v", out, again, err)
	}

	// Nothing but type and properties changed meaning. UseNumber keeps
	// numbers as their text, which the splice must not alter.
	in := decodeNumbers(t, raw)
	for k, v := range in {
		if k == "type" {
			continue
		}
		if !reflect.DeepEqual(got[k], v) {
			t.Fatalf("Input(%q) = %q changed %q", raw, out, k)
		}
	}
	if len(got) > len(in)+2 {
		t.Fatalf("Input(%q) = %q added keys", raw, out)
	}
}

func decodeNumbers(t *testing.T, b []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decoding accepted %q: %v", b, err)
	}
	return m
}

func FuzzOutput(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := Output(raw, fuzzLimits)
		if err != nil || out == nil {
			return
		}
		again, err := Output(out, fuzzLimits)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: Output(%q) = %q, %v", out, again, err)
		}
	})
}
