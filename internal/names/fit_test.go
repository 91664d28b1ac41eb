package names

import (
	"fmt"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/namegold"
)

// TestFitGolden holds model-facing names, which clients and stored pins
// already hold, to the names recorded in testdata/fit.golden, over the
// dev set's real servers and tools, as they are and stretched or
// spoiled so that each takes the hashed form.
func TestFitGolden(t *testing.T) {
	lines := map[string][]string{}
	for _, s := range namegold.Devset(t) {
		p := Prefix(s.Name)
		long := Prefix(s.Name + "-with-a-rather-long-deployment-name")
		var entries []Entry
		for _, tool := range s.Tools {
			for _, in := range [][2]string{
				{p, tool}, {long, tool + "_and_a_longer_tail_than_fits"}, {p, tool + ".v2"},
				{"", s.Name + ":" + tool}, {s.Name + "__x", tool},
			} {
				lines[s.Name] = append(lines[s.Name], fmt.Sprintf("ModelName(%q, %q) = %s", in[0], in[1], ModelName(in[0], in[1])))
			}
			// Two servers that derive the same prefix contest every name.
			entries = append(entries, Entry{ID: ID{s.Name, tool}, Prefix: p}, Entry{ID: ID{s.Name + "!", tool}, Prefix: p})
		}
		got, _ := Assign(entries)
		for _, e := range entries {
			lines[s.Name] = append(lines[s.Name], fmt.Sprintf("Assign %s = %s", e.ID, got[e.ID]))
		}
	}
	namegold.Check(t, "testdata/fit.golden", lines)
}
