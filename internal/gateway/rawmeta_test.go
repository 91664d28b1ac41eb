package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMetaCache: what the cache answers is what rawMeta answers, on a miss
// and on a hit, each caller gets its own copy, and the cache stays bounded.
func TestMetaCache(t *testing.T) {
	metas := []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"x":1}`,
		`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"Sampling":{}}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
	}
	var mc metaCache
	for round := range 2 {
		for _, m := range metas {
			want, wantOK := rawMeta([]byte(m))
			got, ok := mc.get([]byte(m))
			if ok != wantOK || !cmp.Equal(got, want) {
				t.Errorf("round %d, %s: get = %+v, %v; rawMeta = %+v, %v", round, m, got, ok, want, wantOK)
			}
			if ok {
				again, _ := mc.get([]byte(m))
				if again == got {
					t.Errorf("%s: two calls share one *ClientCapabilities", m)
				}
			}
		}
	}
	for i := range 3 * metaCacheEntries {
		mc.get(fmt.Appendf(nil, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"n":%d}`, i))
	}
	if n := len(mc.m); n > metaCacheEntries {
		t.Errorf("cache holds %d entries, more than %d", n, metaCacheEntries)
	}
	big := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"pad":"` + strings.Repeat("x", metaCacheMaxLen) + `"}`
	if _, ok := mc.get([]byte(big)); !ok {
		t.Error("a large _meta was refused")
	}
	if _, cached := mc.m[big]; cached {
		t.Error("a _meta over metaCacheMaxLen was cached")
	}
}

// TestResultMeta: the shortcut for a _meta of protocol keys only gives
// what the general path gives.
func TestResultMeta(t *testing.T) {
	rc := &rawCalls{serverInfo: json.RawMessage(`{"name":"switchboard","version":"1"}`)}
	for _, tc := range []struct {
		meta string
		want string
	}{
		{``, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`null`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`{}`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`{"io.modelcontextprotocol/serverInfo":{"name":"up"}}`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`{"io.modelcontextprotocol/serverInfo":{"name":"up"},"io.modelcontextprotocol/x":1}`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`{"io.modelcontextprotocol/serverInfo":{"name":"up"},"k":[1, 2]}`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"},"k":[1,2]}`},
		{`{"io.modelcontextprotocol\/serverInfo":{"name":"up"}}`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`{"\u0069o.modelcontextprotocol/serverInfo":{"name":"up"}}`, `{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
		{`{"io.modelcontextprotocol":1}`, `{"io.modelcontextprotocol":1,"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"1"}}`},
	} {
		var raw []byte
		if tc.meta != "" {
			raw = []byte(tc.meta)
		}
		got, ok := rc.resultMeta(raw)
		if !ok || string(got) != tc.want {
			t.Errorf("resultMeta(%s) = %s, %v; want %s", tc.meta, got, ok, tc.want)
		}
	}
}
