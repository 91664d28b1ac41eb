package profile

import (
	"fmt"
	"sort"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/namegold"
)

// TestFitGolden holds the names each provider format gives, which agents
// built on `tools --format` already hold, to the names recorded in
// testdata/fit.golden, over the dev set's real servers and tools, as they
// are and spoiled or stretched so that each is fitted.
func TestFitGolden(t *testing.T) {
	namegold.Check(t, "testdata/fit.golden", func(s namegold.Server) (lines []string) {
		var origs []string
		for _, tool := range s.Tools {
			origs = append(origs, s.Name+"."+tool, tool, tool+"-"+s.Name+"-with-a-rather-long-tail-that-does-not-fit", "9"+tool)
		}
		for _, c := range []struct {
			rule   string
			r      nameRule
			always bool
		}{{"openai", ruleOpenAI, true}, {"gemini", ruleGemini, true}, {"geminiParam", ruleGeminiParam, false}} {
			got := assignNames(origs, c.r, c.always)
			keys := make([]string, 0, len(got))
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				lines = append(lines, fmt.Sprintf("%s %q = %s", c.rule, k, got[k]))
			}
		}
		for _, n := range []string{s.Name, s.Name + " tools", s.Name + "-with-a-rather-long-tail-that-does-not-fit-at-all-anywhere"} {
			lines = append(lines, fmt.Sprintf("NamespaceName(%q) = %s", n, NamespaceName(n)))
		}
		return lines
	})
}
