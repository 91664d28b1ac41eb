package fault

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestEveryCodeHasASentinel: for every code in Codes, fault.go declares an
// exported sentinel (`Name = &Error{Code: CodeX}`) to test for it with
// errors.Is.
func TestEveryCodeHasASentinel(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "fault.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sentinels := map[string]string{} // code constant → sentinel name
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 || !vs.Names[0].IsExported() {
			return true
		}
		u, ok := vs.Values[0].(*ast.UnaryExpr)
		if !ok || u.Op != token.AND {
			return true
		}
		lit, ok := u.X.(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 1 {
			return true
		}
		if kv, ok := lit.Elts[0].(*ast.KeyValueExpr); ok {
			if id, ok := kv.Value.(*ast.Ident); ok {
				sentinels[id.Name] = vs.Names[0].Name
			}
		}
		return true
	})
	consts := map[Code]string{} // code → its constant's name
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 {
			if bl, ok := vs.Values[0].(*ast.BasicLit); ok && bl.Kind == token.STRING {
				consts[Code(bl.Value[1:len(bl.Value)-1])] = vs.Names[0].Name
			}
		}
		return true
	})
	for _, c := range Codes {
		name, ok := consts[c]
		if !ok {
			t.Errorf("code %s: no constant in fault.go", c)
			continue
		}
		if _, ok := sentinels[name]; !ok {
			t.Errorf("code %s (%s) has no sentinel for errors.Is", c, name)
		}
	}
}
