package fault_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/switchboard-mcp/switchboard/fault"
)

// TestSecurityCodeTable holds docs/SECURITY.md's table of error codes to
// the codes this package defines: every code once, none other, and each
// row's "retryable" as Retryable says.
func TestSecurityCodeTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| .* \\| (yes|no) \\|$")
	rows := map[fault.Code]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		c := fault.Code(m[1])
		if _, dup := rows[c]; dup {
			t.Errorf("code %s has two rows", c)
		}
		rows[c] = m[2]
	}
	for _, c := range fault.Codes {
		got, ok := rows[c]
		if !ok {
			t.Errorf("code %s has no row in docs/SECURITY.md", c)
			continue
		}
		if want := map[bool]string{true: "yes", false: "no"}[c.Retryable()]; got != want {
			t.Errorf("code %s: retryable %q in docs/SECURITY.md, want %q", c, got, want)
		}
		delete(rows, c)
	}
	for c := range rows {
		t.Errorf("docs/SECURITY.md has a row for %s, which is not a code", c)
	}
}
