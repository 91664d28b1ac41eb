package upstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListFilter(t *testing.T) {
	tests := []struct {
		name      string
		page      string
		wantNames []string
		wantNotes []string
		same      bool
	}{
		{"clean page untouched", `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c"}`, []string{"a"}, nil, true},
		{"junk entries", `{"tools":[null,42,"str",true,[],{"name":"a","inputSchema":{}},{"name":7}],"nextCursor":"c"}`, []string{"a"}, []string{
			"tools[0] is null, not an object: skipped",
			"tools[1] is a number, not an object: skipped",
			"tools[2] is a string, not an object: skipped",
			"tools[3] is a boolean, not an object: skipped",
			"tools[4] is an array, not an object: skipped",
			"tools[6] cannot be decoded",
		}, false},
		{"not an object", `[]`, nil, nil, true},
		{"list not an array", `{"tools":{}}`, nil, nil, true},
		{"prompts", `{"prompts":[1,{"name":"p"}]}`, nil, []string{"prompts[0] is a number, not an object: skipped"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := new(listFilter)
			out := f.filter(json.RawMessage(tt.page))
			if tt.same && string(out) != tt.page {
				t.Errorf("page changed: %s", out)
			}
			var res mcp.ListToolsResult
			if err := json.Unmarshal(out, &res); err != nil && strings.Contains(tt.page, `"tools":[`) {
				t.Fatalf("go-sdk cannot decode the filtered page %s: %v", out, err)
			}
			var got []string
			for _, tool := range res.Tools {
				got = append(got, tool.Name)
			}
			if tt.wantNames != nil && strings.Join(got, ",") != strings.Join(tt.wantNames, ",") {
				t.Errorf("tools = %v, want %v", got, tt.wantNames)
			}
			if strings.Contains(tt.page, "nextCursor") && res.NextCursor != "c" {
				t.Errorf("nextCursor lost: %s", out)
			}
			notes := f.dropped()
			if len(notes) != len(tt.wantNotes) {
				t.Fatalf("notes = %q, want %q", notes, tt.wantNotes)
			}
			for i := range notes {
				if !strings.HasPrefix(notes[i], tt.wantNotes[i]) {
					t.Errorf("note %d = %q, want prefix %q", i, notes[i], tt.wantNotes[i])
				}
			}
		})
	}
}
