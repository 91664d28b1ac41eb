package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/ingest"
)

// TestEveryFindingKindIsExported: each kind internal/ingest defines has a
// constant here of the same name, so that a program can tell findings
// apart without strings, and says the kind's severity as SeverityOf does.
func TestEveryFindingKindIsExported(t *testing.T) {
	t.Parallel()
	kinds := func(path string) map[string]*ast.CommentGroup {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*ast.CommentGroup{}
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for _, id := range vs.Names {
					if len(id.Name) > 4 && id.Name[:4] == "Kind" {
						out[id.Name] = vs.Doc
					}
				}
			}
			return true
		})
		return out
	}
	mine := kinds("finding.go")
	for name := range kinds("../internal/ingest/ingest.go") {
		doc, ok := mine[name]
		if !ok {
			t.Errorf("ingest.%s has no constant in host", name)
			continue
		}
		if doc == nil {
			t.Errorf("host.%s has no doc comment", name)
		}
	}
	values := map[string]string{
		"KindListSkipped":      KindListSkipped,
		"KindNameRejected":     KindNameRejected,
		"KindDuplicate":        KindDuplicate,
		"KindSchema":           KindSchema,
		"KindSanitised":        KindSanitised,
		"KindTruncated":        KindTruncated,
		"KindTooMany":          KindTooMany,
		"KindUnexpected":       KindUnexpected,
		"KindWithheld":         KindWithheld,
		"KindFlagged":          KindFlagged,
		"KindAnnotations":      KindAnnotations,
		"KindShadowing":        KindShadowing,
		"KindHeld":             KindHeld,
		"KindListMissing":      KindListMissing,
		"KindListFailed":       KindListFailed,
		"KindStdoutStray":      KindStdoutStray,
		"KindLaunchHeld":       KindLaunchHeld,
		"KindLaunchUnapproved": KindLaunchUnapproved,
	}
	for name, doc := range mine {
		v, ok := values[name]
		if !ok {
			t.Errorf("host.%s is not in this test's list", name)
			continue
		}
		sev, _, _ := strings.Cut(doc.Text(), ":")
		want := string(ingest.SeverityOf(v))
		switch v {
		case KindLaunchHeld:
			want = string(SeverityHigh)
		case KindLaunchUnapproved:
			want = string(SeverityWarn)
		}
		if !strings.EqualFold(sev, want) {
			t.Errorf("host.%s: its doc says %q, its severity is %s", name, sev, want)
		}
	}
}
