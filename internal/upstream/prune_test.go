package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkCheckMaxDepth is go-sdk v1.8.0's internal/json checkMaxDepth, copied
// verbatim (it is unexported) so that the tests can hold pruneDeep to the
// exact rule go-sdk applies. TestPruneSDKBoundary checks the copy against
// the real thing through jsonrpc.DecodeMessage; if a go-sdk upgrade changes
// the rule, that test fails first.
func sdkCheckMaxDepth(data []byte, maxDepth int) error {
	var (
		depth    int
		inString bool
		escaped  bool
	)
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}

		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return errSDKMaxDepth
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

var errSDKMaxDepth = errors.New("exceeded maximum nesting depth")

// deepArray is n nested arrays around inner: deepArray(2, "1") is [[1]].
func deepArray(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

// deepObject is n nested objects: deepObject(2) is {"a":{}}.
func deepObject(n int) string {
	return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

// toolsList is a tools/list response holding the given raw tool entries.
func toolsList(tools ...string) string {
	return `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + strings.Join(tools, ",") + `]}}`
}

const (
	okTool = `{"name":"ok","inputSchema":{"type":"object"}}`
	// A tool whose strings are full of brackets and escapes: a scanner
	// that lost track of where strings end would miscount its depth.
	trickyTool = `{"name":"t{[\"]","description":"\\\"[[[[{{{{\\","inputSchema":{"type":"object","x\"]}":"\\"}}`
)

// deepTool is a tool whose inputSchema nests n levels below the tool.
func deepTool(n int) string {
	return `{"name":"deep","inputSchema":` + deepArray(n, `"]]\"}}"`) + `}`
}

func TestPruneDeep(t *testing.T) {
	deep := deepTool(10000)
	tests := []struct {
		name  string
		msg   string
		limit int // sdkMaxDepth when 0
		// want is the expected output; "" means msg unchanged.
		want       string
		wantPruned int
	}{
		{
			name: "shallow",
			msg:  toolsList(okTool, trickyTool),
		},
		{
			name:       "deep tool among good ones",
			msg:        toolsList(okTool, deep, trickyTool),
			want:       toolsList(okTool, "null", trickyTool),
			wantPruned: 1,
		},
		{
			name:       "deep arrays",
			msg:        toolsList(okTool, deepArray(5000, "1")),
			want:       toolsList(okTool, "null"),
			wantPruned: 1,
		},
		{
			name:       "deep objects",
			msg:        toolsList(deepObject(5000), okTool),
			want:       toolsList("null", okTool),
			wantPruned: 1,
		},
		{
			name: "brackets and escaped quotes in strings around the deep part",
			msg: `{"jsonrpc":"2.0","id":"{[\"]","result":{"nextCursor":"]]]\\","tools":[` +
				`"{[\"]",` + deepArray(2000, `"{[\"]"`) + `,"\\\\\"[{"]}}`,
			want: `{"jsonrpc":"2.0","id":"{[\"]","result":{"nextCursor":"]]]\\","tools":[` +
				`"{[\"]",null,"\\\\\"[{"]}}`,
			wantPruned: 1,
		},
		{
			name: "several lists, pretty-printed",
			msg: "{\n \"jsonrpc\" : \"2.0\" ,\n \"id\" : 7 ,\n \"result\" : {\n  \"_meta\" : {} ,\n" +
				"  \"prompts\" : [ " + deepObject(1500) + " , 1 , " + deepArray(1200, "") + " ] ,\n" +
				"  \"resources\" : [\t" + deepArray(1100, "") + "\r\n]\n }\n}\n",
			want: "{\n \"jsonrpc\" : \"2.0\" ,\n \"id\" : 7 ,\n \"result\" : {\n  \"_meta\" : {} ,\n" +
				"  \"prompts\" : [ null , 1 , null ] ,\n" +
				"  \"resources\" : [\tnull\r\n]\n }\n}\n",
			wantPruned: 3,
		},
		{
			// The message, result and list take three levels, so an
			// element may nest limit-3 levels and no more.
			name:       "exactly at the limit is kept, one more is pruned",
			limit:      8,
			msg:        toolsList(deepArray(5, "0"), deepArray(6, "0")),
			want:       toolsList(deepArray(5, "0"), "null"),
			wantPruned: 1,
		},
		{
			name:       "escaped result key",
			msg:        `{"jsonrpc":"2.0","id":1,"res\u0075lt":{"tools":[` + deep + `]}}`,
			want:       `{"jsonrpc":"2.0","id":1,"res\u0075lt":{"tools":[null]}}`,
			wantPruned: 1,
		},
		{
			name:       "duplicate result keys are both pruned",
			msg:        `{"result":{"tools":[` + deep + `]},"jsonrpc":"2.0","id":1,"result":{"tools":[1,` + deep + `]}}`,
			want:       `{"result":{"tools":[null]},"jsonrpc":"2.0","id":1,"result":{"tools":[1,null]}}`,
			wantPruned: 2,
		},
		{
			name:       "structuredContent",
			msg:        `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":` + deepObject(2000) + `}}`,
			wantPruned: -1,
		},
		{
			// Pruning the list is not enough, so nothing is pruned.
			name:       "deep list and deep structuredContent",
			msg:        `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + deep + `],"structuredContent":` + deepObject(2000) + `}}`,
			wantPruned: -1,
		},
		{
			name:       "request params",
			msg:        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"tools":[` + deep + `]}}}`,
			wantPruned: -1,
		},
		{
			name:       "error data",
			msg:        `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":[` + deep + `]}}`,
			wantPruned: -1,
		},
		{
			name:       "result is a list",
			msg:        `{"jsonrpc":"2.0","id":1,"result":[` + deep + `]}`,
			wantPruned: -1,
		},
		{
			name:       "list one level further down",
			msg:        `{"jsonrpc":"2.0","id":1,"result":{"tools":{"list":[` + deep + `]}}}`,
			wantPruned: -1,
		},
		{
			name:       "batch",
			msg:        `[` + toolsList(deep) + `]`,
			wantPruned: -1,
		},
		{
			name: "invalid: unterminated",
			msg:  toolsList(okTool, deep)[:20000],
		},
		{
			name: "invalid: trailing garbage",
			msg:  toolsList(deep) + `}`,
		},
		{
			name: "invalid: shallow",
			msg:  `{"result":{"tools":[}`,
		},
		{
			name: "empty",
			msg:  ``,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = sdkMaxDepth
			}
			msg := []byte(tt.msg)
			out, pruned := pruneDeep(msg, limit)
			if pruned != tt.wantPruned {
				t.Errorf("pruned = %d, want %d", pruned, tt.wantPruned)
			}
			if tt.want == "" {
				if !sameSlice(out, msg) {
					t.Errorf("msg not returned unchanged:\n got %.300s", out)
				}
			} else if string(out) != tt.want {
				t.Errorf("out:\n got %.300s\nwant %.300s", out, tt.want)
			}
			switch {
			case pruned < 0:
				// -1 is only for messages go-sdk would refuse anyway.
				if sdkCheckMaxDepth(msg, limit) == nil {
					t.Errorf("pruned = -1 for a message within the limit")
				}
			case pruned > 0:
				if !json.Valid(out) {
					t.Errorf("out is not valid JSON")
				}
				if sdkCheckMaxDepth(out, limit) != nil {
					t.Errorf("out exceeds the limit")
				}
			}
		})
	}
}

// sameSlice reports whether a and b share their backing array and length:
// the fast path must hand back the caller's bytes, not a copy.
func sameSlice(a, b []byte) bool {
	if len(a) != len(b) || cap(a) != cap(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// TestPruneSDKBoundary ties the convention to go-sdk itself: a message
// whose deepest opener sits at depth sdkMaxDepth (counting the top-level
// object as 1) decodes, one level more is refused, pruneTooDeep and the
// copied check agree on both, and what pruneDeep makes of the refused one
// decodes.
func TestPruneSDKBoundary(t *testing.T) {
	for _, tc := range []struct {
		depth   int
		refused bool
	}{
		{sdkMaxDepth, false},
		{sdkMaxDepth + 1, true},
	} {
		// message, result, list, then the element nests the rest.
		msg := []byte(toolsList(okTool, deepArray(tc.depth-3, "")))
		_, err := jsonrpc.DecodeMessage(msg)
		if refused := err != nil; refused != tc.refused {
			t.Fatalf("depth %d: go-sdk refused = %v (%v), want %v", tc.depth, refused, err, tc.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "maximum nesting depth") {
			t.Fatalf("depth %d: go-sdk refused for another reason: %v", tc.depth, err)
		}
		if got := sdkCheckMaxDepth(msg, sdkMaxDepth) != nil; got != tc.refused {
			t.Errorf("depth %d: copied check refused = %v, want %v", tc.depth, got, tc.refused)
		}
		if got := pruneTooDeep(msg, sdkMaxDepth); got != tc.refused {
			t.Errorf("depth %d: pruneTooDeep = %v, want %v", tc.depth, got, tc.refused)
		}
		out, pruned := pruneDeep(msg, sdkMaxDepth)
		if want := map[bool]int{false: 0, true: 1}[tc.refused]; pruned != want {
			t.Errorf("depth %d: pruned = %d, want %d", tc.depth, pruned, want)
		}
		if _, err := jsonrpc.DecodeMessage(out); err != nil {
			t.Errorf("depth %d: go-sdk refused the pruned message: %v", tc.depth, err)
		}
	}
}

// TestPruneTooDeepAgreesWithSDK holds the fast scan to the copied check on
// inputs chosen to trip a scanner that handles strings differently: runs
// of backslashes of both parities, escapes at the very end, unterminated
// strings, stray closers (which go-sdk lets take the depth no lower than
// zero) and bytes that are not UTF-8.
func TestPruneTooDeepAgreesWithSDK(t *testing.T) {
	inputs := []string{
		``, `"`, `\`, `"\`, `"\"`, `"\\"`, `"\\\"`, `"\\\\"[`, `"\\\"[`,
		`[[[`, `[[["]]]"`, `[["\"]"[`, `"\\\\\\\\"[[`, `"\\\\\\\\\"[["[`,
		`]]]][[`, `}}{{`, `[]]][[[`, `["a\\"]["b\"][`, "[\xff\"\xc3\"[\"[",
		`{"a":"[","b":"\\","c":[[{"d":"\"["}]]}`, `[` + strings.Repeat(`"\\"`, 50) + `[[`,
		`"` + strings.Repeat(`\`, 101) + `"[[[`, `"` + strings.Repeat(`\`, 100) + `"[[[`,
	}
	for _, in := range inputs {
		for limit := 0; limit <= 4; limit++ {
			want := sdkCheckMaxDepth([]byte(in), limit) != nil
			if got := pruneTooDeep([]byte(in), limit); got != want {
				t.Errorf("pruneTooDeep(%q, %d) = %v, go-sdk %v", in, limit, got, want)
			}
		}
	}
}

// TestPruneFindValidity holds pruneFind's parser to json.Valid on the
// corners of the grammar; FuzzPrune explores the rest.
func TestPruneFindValidity(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{}`, `[]`, ` {} `, `{} {}`, `{}x`, `{`, `}`, `[}`, `{]`, `[1,]`, `{"a":1,}`,
		`{"a" 1}`, `{"a":}`, `{1:1}`, `{"a":1 "b":2}`, `[1 2]`, `[,1]`, `{,}`,
		`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`, `-0.5e+3`, `+1`, `0x1`,
		`true`, `tru`, `truex`, `nul`, `null`, `false`, `[true,false,null]`, `NaN`,
		`""`, `"`, `"\"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"\uABcd"`, `"\/\b\f\n\r\t"`,
		"\"\t\"", "\"\x7f\xff\"", "\"\x00\"", "\ufeff{}", "{\"a\":\v1}",
		`{"result":{"tools":[[[]],{"a":[1,{}]},"x",1]}}`, `{"result":[1]}`, `[{"result":{"x":[[]]}}]`,
	} {
		_, got := pruneFind([]byte(in), 1)
		if want := json.Valid([]byte(in)); got != want {
			t.Errorf("pruneFind(%q) valid = %v, json.Valid %v", in, got, want)
		}
	}
}

// shallowMessage builds a realistic tools/list response of at least size
// bytes: long descriptions with the odd escape, small schemas.
func shallowMessage(size int) []byte {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for n := 0; len(msg) < size; n++ {
		if n > 0 {
			msg = append(msg, ',')
		}
		tool, err := json.Marshal(map[string]any{
			"name": fmt.Sprintf("read_file_%d", n),
			"description": strings.Repeat("Reads a file from the workspace and returns its contents. ", 3) +
				`Paths are "relative" to the root; use \ only on Windows. <tag> & [brackets] {braces}`,
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"path":   map[string]any{"type": "string", "description": "file to read"},
					"offset": map[string]any{"type": "integer", "minimum": 0},
					"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				},
				"required": []string{"path"},
			},
		})
		if err != nil {
			panic(err)
		}
		msg = append(msg, tool...)
	}
	return append(msg, "]}}"...)
}

func TestPruneDeepLargeShallow(t *testing.T) {
	msg := shallowMessage(2 << 20)
	var out []byte
	var pruned int
	allocs := testing.AllocsPerRun(10, func() { out, pruned = pruneDeep(msg, sdkMaxDepth) })
	if pruned != 0 || !sameSlice(out, msg) {
		t.Errorf("pruneDeep changed a shallow %d-byte message: pruned = %d", len(msg), pruned)
	}
	if allocs != 0 {
		t.Errorf("fast path allocates: %v allocations per call", allocs)
	}
}

// FuzzPrune runs with a small limit, so that random inputs reach the slow
// path often. Beyond not panicking it checks the promises callers rely
// on, and compares the pruning with a plain reference on the decoded
// message.
func FuzzPrune(f *testing.F) {
	const limit = 8
	for _, s := range []string{
		toolsList(okTool, trickyTool),
		toolsList(okTool, deepArray(6, "1"), trickyTool),
		toolsList(deepObject(7), `"{[\"]"`, deepArray(5, `"\\"`)),
		`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":` + deepObject(9) + `}}`,
		`{"res\u0075lt":{"a":[` + deepArray(9, "") + `],"b":[1,2]},"result":{"c":[[[[[[]]]]]]}}`,
		`{"method":"x","params":` + deepArray(9, "") + `}`,
		` { "result" : { "x" : [ ` + deepArray(7, "true") + ` , null ] } } `,
		`[[[[[[[[[[`, `"\\\"[[[[[[[[[`, `]]]]{{{{{{{{{`, `{"result":{"x":[[[[[[[[[[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if sdkCheckMaxDepth(msg, 9000) != nil {
			t.Skip("json.Valid, the oracle, refuses depths above 10,000")
		}
		if _, valid := pruneFind(msg, limit); valid != json.Valid(msg) {
			t.Fatalf("pruneFind(%q) valid = %v, json.Valid disagrees", msg, valid)
		}
		orig := bytes.Clone(msg)
		tooDeep := sdkCheckMaxDepth(msg, limit) != nil
		if got := pruneTooDeep(msg, limit); got != tooDeep {
			t.Fatalf("pruneTooDeep(%q) = %v, go-sdk %v", msg, got, tooDeep)
		}
		out, pruned := pruneDeep(msg, limit)
		if !bytes.Equal(msg, orig) {
			t.Fatalf("pruneDeep modified its input")
		}
		valid := json.Valid(msg)
		switch {
		case !tooDeep || !valid:
			if pruned != 0 || !sameSlice(out, msg) {
				t.Fatalf("pruneDeep(%q) = %q, %d; want it unchanged and 0", msg, out, pruned)
			}
			return
		case pruned < 0:
			if !sameSlice(out, msg) {
				t.Fatalf("pruned = -1 but out changed: %q", out)
			}
			return
		}
		if pruned == 0 {
			t.Fatalf("pruneDeep(%q) = 0 for a valid message over the limit", msg)
		}
		if !json.Valid(out) || sdkCheckMaxDepth(out, limit) != nil {
			t.Fatalf("pruneDeep(%q) = %q: invalid or still too deep", msg, out)
		}
		// Decoded, out must be msg with the too-deep list elements of
		// the result (the last one, as decoders keep) set to nil.
		want, got := decodeAny(t, msg), decodeAny(t, out)
		refPrune(want, limit)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pruneDeep(%q) = %q; decoded it differs from the reference", msg, out)
		}
	})
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// refPrune is the obvious recursive version of pruneDeep's rule, on a
// decoded message; fine for the small values a fuzzer produces.
func refPrune(msg any, limit int) {
	top, _ := msg.(map[string]any)
	result, _ := top["result"].(map[string]any)
	for _, v := range result {
		list, _ := v.([]any)
		for i, el := range list {
			if pruneBase+refDepth(el) > limit {
				list[i] = nil
			}
		}
	}
}

func refDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, refDepth(e))
		}
	case []any:
		for _, e := range v {
			d = max(d, refDepth(e))
		}
	default:
		return 0
	}
	return d + 1
}

// BenchmarkPruneDeepShallow100KB measures the cost every message pays,
// next to json.Valid on the same bytes for scale.
func BenchmarkPruneDeepShallow100KB(b *testing.B) {
	msg := shallowMessage(100 << 10)
	b.Run("pruneDeep", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			if _, pruned := pruneDeep(msg, sdkMaxDepth); pruned != 0 {
				b.Fatal("pruned a shallow message")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if !json.Valid(msg) {
				b.Fatal("invalid")
			}
		}
	})
}

// BenchmarkPruneDeepOneDeepTool measures the rare slow path: the same
// list with one 10,000-level tool in the middle.
func BenchmarkPruneDeepOneDeepTool(b *testing.B) {
	shallow := shallowMessage(100 << 10)
	i := bytes.Index(shallow, []byte(`"tools":[`)) + len(`"tools":[`)
	msg := slices.Concat(shallow[:i], []byte(deepTool(10000)+","), shallow[i:])
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, pruned := pruneDeep(msg, sdkMaxDepth); pruned != 1 {
			b.Fatalf("pruned = %d", pruned)
		}
	}
}
