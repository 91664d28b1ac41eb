package search

import (
	"reflect"
	"strings"
	"testing"
)

func TestParamsFromSchema(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []Param
	}{
		{"order kept", `{"type":"object","properties":{"path":{"type":"string","description":"File path"},"head":{"type":"number"},"abc":{"description":"first?"}}}`,
			[]Param{{"path", "File path"}, {"head", ""}, {"abc", "first?"}}},
		{"title when no description", `{"properties":{"q":{"title":"Query"},"r":{"title":"R","description":"Rows"}}}`,
			[]Param{{"q", "Query"}, {"r", "Rows"}}},
		{"non-string description", `{"properties":{"a":{"description":42},"b":{"description":["x"],"title":{"y":1}}}}`,
			[]Param{{"a", ""}, {"b", ""}}},
		{"non-object property", `{"properties":{"a":true,"b":null,"c":"str"}}`,
			[]Param{{"a", ""}, {"b", ""}, {"c", ""}}},
		{"duplicate: first wins", `{"properties":{"a":{"description":"one"},"a":{"description":"two"}}}`,
			[]Param{{"a", "one"}}},
		{"nested ignored", `{"properties":{"outer":{"type":"object","properties":{"inner":{"description":"no"}}}}}`,
			[]Param{{"outer", ""}}},
		{"description of an alternative", `{"properties":{"parent":{"anyOf":[{"type":"object","description":"The page that holds it"},{"type":"string"}]}}}`,
			[]Param{{"parent", "The page that holds it"}}},
		{"first alternative with one", `{"properties":{"a":{"oneOf":[{"type":"null"},{"title":"Second"},{"description":"Third"}]}}}`,
			[]Param{{"a", "Second"}}},
		{"own description first", `{"properties":{"a":{"description":"Own","anyOf":[{"description":"Alt"}]}}}`,
			[]Param{{"a", "Own"}}},
		{"anyOf before allOf before items", `{"properties":{"a":{"items":{"description":"I"},"allOf":[{"description":"All"}],"anyOf":[{}]}}}`,
			[]Param{{"a", "All"}}},
		{"items", `{"properties":{"tags":{"type":"array","items":{"description":"A tag"}}}}`,
			[]Param{{"tags", "A tag"}}},
		{"two levels at most", `{"properties":{"a":{"anyOf":[{"anyOf":[{"anyOf":[{"description":"deep"}]}]}]}}}`,
			[]Param{{"a", ""}}},
		{"two levels", `{"properties":{"a":{"anyOf":[{"items":{"description":"two"}}]}}}`,
			[]Param{{"a", "two"}}},
		{"alternatives not an array", `{"properties":{"a":{"anyOf":{"description":"x"},"title":"T"}}}`,
			[]Param{{"a", "T"}}},
		{"no properties", `{"type":"object"}`, nil},
		{"empty properties", `{"type":"object","properties":{}}`, nil},
		{"properties not an object", `{"properties":[1,2]}`, nil},
		{"properties null", `{"properties":null}`, nil},
		{"not an object", `[1,2,3]`, nil},
		{"junk", `{"properties":{"a":{`, nil},
		{"empty", ``, nil},
	}
	for _, tt := range tests {
		if got := ParamsFromSchema([]byte(tt.schema)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ParamsFromSchema(%s) = %q, want %q", tt.name, tt.schema, got, tt.want)
		}
	}
}

func TestParamsFromSchemaBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"properties":{`)
	for i := range 300 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p` + itoa(i+1) + `":{"description":"` + strings.Repeat("é", 1000) + `"}`)
	}
	b.WriteString(`}}`)
	ps := ParamsFromSchema([]byte(b.String()))
	if len(ps) != maxParams {
		t.Fatalf("got %d params, want %d", len(ps), maxParams)
	}
	for _, p := range ps {
		if len(p.Description) > maxParamDescBytes || !strings.HasPrefix(strings.Repeat("é", 600), p.Description) {
			t.Fatalf("description of %d bytes not cut at a rune boundary under %d", len(p.Description), maxParamDescBytes)
		}
	}
}

func FuzzParamsFromSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"path":{"type":"string","description":"File path"}}}`))
	f.Add([]byte(`{"properties":{"a":{"title":"T"},"a":1}}`))
	f.Add([]byte(`{"properties":[]}`))
	f.Add([]byte(`{"properties":{"a":{"anyOf":[{"items":{"description":"d"}},{"type":"null"}]}}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		ps := ParamsFromSchema(schema)
		if len(ps) > maxParams {
			t.Fatalf("%d params", len(ps))
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if seen[p.Name] {
				t.Fatalf("duplicate param %q", p.Name)
			}
			seen[p.Name] = true
			if len(p.Description) > maxParamDescBytes {
				t.Fatalf("description of %d bytes", len(p.Description))
			}
		}
	})
}
