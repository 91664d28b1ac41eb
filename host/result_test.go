package host_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestResultStructured: the structured content of a result, as sent, and
// decoded; none for a result without it or with null.
func TestResultStructured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want string // "" for none
	}{
		{`{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`, `{"sum":5}`},
		{`{"structuredContent": {"a": [1, {"b": null}]} , "isError": false}`, `{"a": [1, {"b": null}]}`},
		{`{"structuredContent":{"sum":1},"structuredContent":{"sum":2}}`, `{"sum":2}`},
		{`{"content":[]}`, ""},
		{`{"structuredContent":null}`, ""},
		{`not json`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		r := &host.Result{Raw: json.RawMessage(tt.raw)}
		got, ok := r.Structured()
		if string(got) != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: Structured() = %s, %v; want %s", tt.raw, got, ok, tt.want)
		}
	}
	var v struct{ Sum int }
	if err := (&host.Result{Raw: json.RawMessage(tests[0].raw)}).DecodeStructured(&v); err != nil || v.Sum != 5 {
		t.Errorf("DecodeStructured: %+v %v", v, err)
	}
	if err := (&host.Result{Raw: json.RawMessage(`{}`)}).DecodeStructured(&v); !errors.Is(err, host.ErrNoStructuredContent) {
		t.Errorf("DecodeStructured without any: %v", err)
	}
}
