package config

import (
	"fmt"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/namegold"
)

// TestFitGolden holds server prefixes, which every model-facing tool name
// and stored pin starts with, to the prefixes recorded in
// testdata/fit.golden, over the dev set's real server names, as they are
// and stretched so that the hashed form is cut.
func TestFitGolden(t *testing.T) {
	namegold.Check(t, "testdata/fit.golden", func(s namegold.Server) (lines []string) {
		for _, name := range []string{s.Name, s.Name + ".prod", s.Name + "-with-a-rather-long-deployment-name", "_" + s.Name + "__x__"} {
			lines = append(lines, fmt.Sprintf("derivePrefix(%q) = %s", name, derivePrefix(name)))
			for n := 8; n <= 24; n += 4 {
				lines = append(lines, fmt.Sprintf("hashedPrefix(%q, %d) = %s", name, n, hashedPrefix(name, n)))
			}
		}
		return lines
	})
}
