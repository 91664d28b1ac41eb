package upstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestIsErrorFlag(t *testing.T) {
	tests := []struct {
		raw     string
		want    bool
		wantErr bool
	}{
		{`{}`, false, false},
		{`{"isError":true}`, true, false},
		{` { "content" : [ {"type":"text","text":"a \"isError\":true }"} ] , "isError" : true } `, true, false},
		{`{"isError":false,"content":[]}`, false, false},
		{`{"isError":null}`, false, false},
		{`{"isError":true,"isError":false}`, false, false},
		{`{"structuredContent":{"isError":true}}`, false, false},
		{`{"a":[1,{"b":"]}"}],"isError":true}`, true, false},
		{`{"\u0069sError":true}`, true, false},
		{`{"IsError":true}`, false, false}, // exact keys, as go-sdk decodes
		{`{"isError":"yes"}`, false, true},
		{`{"isError":"yes","isError":true}`, true, false}, // the last one wins
		{`{"isError":true,"isError":1}`, false, true},
		{`{"\u0069sError":"yes","isError":false}`, false, false},
		{`{"isError":true} x`, false, true},
		{`[]`, false, true},
		{`"x"`, false, true},
		{``, false, true},
		{`{"a":"unterminated`, false, true},
	}
	for _, tt := range tests {
		got, err := isErrorFlag([]byte(tt.raw))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("isErrorFlag(%s) = %v, %v; want %v, err %v", tt.raw, got, err, tt.want, tt.wantErr)
		}
	}
}

// FuzzIsErrorFlag checks the scanner against encoding/json on valid
// objects.
func FuzzIsErrorFlag(f *testing.F) {
	for _, s := range []string{`{}`, `{"isError":true}`, `{"a":"\"","isError":false}`, `{"a":[{"isError":true}]}`, `{"isError":true,"b":1e5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := isErrorFlag(raw)
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return // not a valid object: any answer but a panic is fine
		}
		var want bool
		if v, ok := lastIsError(raw); ok {
			if json.Unmarshal(v, &want) != nil {
				if err == nil && string(v) != "null" {
					t.Fatalf("isErrorFlag(%s) accepted isError %s", raw, v)
				}
				return
			}
		}
		if err != nil || got != want {
			t.Fatalf("isErrorFlag(%s) = %v, %v; want %v", raw, got, err, want)
		}
	})
}

// lastIsError returns the last top-level "isError" member's raw value,
// matching keys exactly.
func lastIsError(raw []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var last json.RawMessage
	found := false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		if k == "isError" {
			last, found = v, true
		}
	}
	return last, found
}
