package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// archDoc is the document whose package map the module is held to,
// relative to the module root.
const archDoc = "docs/ARCHITECTURE.md"

// goSDK is the module that the cell entry "go-sdk" stands for.
const goSDK = "github.com/modelcontextprotocol/go-sdk"

// platforms are the GOOS/GOARCH pairs whose builds are checked: files
// with build constraints, and so imports, differ between them.
var platforms = []string{"linux/amd64", "darwin/arm64"}

func TestPackageMap(t *testing.T) {
	mod := findModule(t)
	doc := readDoc(t, mod)
	lists := listAll(t, mod)
	tb, err := parseTable(doc, mod.path)
	if err != nil {
		t.Fatalf("%s: %v", archDoc, err)
	}
	for _, msg := range check(tb, mod, lists) {
		t.Error(msg)
	}
}

// TestPackageMapFailsWhenWrong shows that the check sees a table that is
// wrong: each change below makes the true table false in one way, and the
// check must say so.
func TestPackageMapFailsWhenWrong(t *testing.T) {
	mod := findModule(t)
	doc := readDoc(t, mod)
	lists := listAll(t, mod)
	p := func(rel string) string { return mod.path + "/" + rel }
	tests := []struct {
		name   string
		change func(t *testing.T, doc string) string
		want   string
	}{
		{"a package without a row", dropRow("internal/names"),
			p("internal/names") + " has no row"},
		{"a row naming no package", addRow("| `internal/nothere` | Nothing. | stdlib |"),
			"internal/nothere, which is not a package"},
		{"an import the row does not allow", setCell("host", "stdlib"),
			p("host") + " imports " + p("config")},
		{"a function where only types are allowed", setCell("internal/mcphttp", "go-sdk types"),
			"names a function, and its row"},
		{"a non-test import of a tests-only package", setFor("internal/names", "Tests only: names."),
			" imports " + p("internal/names") + ", which is for tests only"},
		{"a cell outside the grammar", setCell("fault", "std lib"),
			`"std lib" is not an entry`},
		{"a test import the rule for tests does not allow", func(t *testing.T, doc string) string {
			return replaceOnce(t, doc, "`internal/testkit/...`, ", "")
		}, "'s tests import " + p("internal/testkit")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := tt.change(t, string(doc))
			if changed == string(doc) {
				t.Fatal("the change left the document as it was")
			}
			msgs := []string{}
			tb, err := parseTable([]byte(changed), mod.path)
			if err != nil {
				msgs = append(msgs, err.Error())
			} else {
				msgs = check(tb, mod, lists)
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tt.want) }) {
				t.Errorf("no message contains %q; got %q", tt.want, msgs)
			}
		})
	}
}

// module is this module: its path and its root directory.
type module struct{ path, dir string }

func findModule(t testing.TB) module {
	t.Helper()
	out, err := goCmd(nil, "list", "-m", "-f", "{{.Path}}\n{{.Dir}}")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 2 {
		t.Fatalf("go list -m: %q", out)
	}
	return module{path: f[0], dir: f[1]}
}

func readDoc(t testing.TB, mod module) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(mod.dir, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func goCmd(env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// listed is what `go list -json` says of a package, in the fields read here.
type listed struct {
	ImportPath   string
	Name         string
	Dir          string
	Standard     bool
	GoFiles      []string
	CgoFiles     []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// listAll lists the module's packages and all their dependencies, for
// each platform, by import path.
func listAll(t testing.TB, mod module) map[string]map[string]*listed {
	t.Helper()
	all := make(map[string]map[string]*listed)
	for _, pl := range platforms {
		goos, goarch, _ := strings.Cut(pl, "/")
		out, err := goCmd([]string{"GOOS=" + goos, "GOARCH=" + goarch, "CGO_ENABLED=0"},
			"list", "-deps", "-json=ImportPath,Name,Dir,Standard,GoFiles,CgoFiles,Imports,TestImports,XTestImports,Error",
			mod.path+"/...")
		if err != nil {
			t.Fatal(err)
		}
		m := make(map[string]*listed)
		for dec := json.NewDecoder(bytes.NewReader(out)); ; {
			p := new(listed)
			if err := dec.Decode(p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("go list (%s): %v", pl, err)
			}
			m[p.ImportPath] = p
		}
		all[pl] = m
	}
	return all
}

// allows reports whether row i of tb lets its packages import imp, and
// whether it lets them name only imp's types.
func (tb table) allows(i int, imp string) (ok, typesOnly bool) {
	for _, it := range tb.rows[i].allow {
		match := false
		switch it.kind {
		case pkgItem:
			match = imp == it.path
		case treeItem:
			match = imp == it.path || strings.HasPrefix(imp, it.path+"/")
		case belowItem:
			for _, r := range tb.rows[i+1:] {
				match = match || slices.Contains(r.pkgs, imp)
			}
		}
		if match && !it.types {
			return true, false
		}
		if match {
			ok, typesOnly = true, true
		}
	}
	return ok, typesOnly
}

// allowsTest reports whether the rule for tests lets the tests of pkg
// import imp.
func (tb table) allowsTest(pkg, imp string) bool {
	for _, it := range tb.tests {
		switch it.kind {
		case ownItem:
			if imp == pkg {
				return true
			}
		case pkgItem:
			if imp == it.path {
				return true
			}
		case treeItem:
			if imp == it.path || strings.HasPrefix(imp, it.path+"/") {
				return true
			}
		}
	}
	return false
}

// standard reports whether an import path is the standard library's (or
// cgo's "C"): its first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// check returns every way the module, as listed for each platform, breaks
// the table.
func check(tb table, mod module, lists map[string]map[string]*listed) []string {
	owner := make(map[string]int)
	var msgs []string
	for i, r := range tb.rows {
		for _, p := range r.pkgs {
			if j, dup := owner[p]; dup {
				msgs = append(msgs, fmt.Sprintf("%s:%d and :%d both have a row for %s", archDoc, tb.rows[j].line, r.line, p))
			}
			owner[p] = i
		}
	}
	inModule := func(p string) bool { return p == mod.path || strings.HasPrefix(p, mod.path+"/") }
	seen := make(map[string]bool)
	found := make(map[string][]string) // message → platforms
	var order []string
	report := func(pl, msg string) {
		if found[msg] == nil {
			order = append(order, msg)
		}
		found[msg] = append(found[msg], pl)
	}
	for _, pl := range platforms {
		for _, p := range sortedPkgs(lists[pl]) {
			if !inModule(p.ImportPath) {
				continue
			}
			seen[p.ImportPath] = true
			if p.Error != nil {
				report(pl, fmt.Sprintf("%s: %s", p.ImportPath, p.Error.Err))
				continue
			}
			i, ok := owner[p.ImportPath]
			if !ok {
				report(pl, fmt.Sprintf("%s has no row in the package map of %s", p.ImportPath, archDoc))
				continue
			}
			where := fmt.Sprintf("its row (%s:%d)", archDoc, tb.rows[i].line)
			for _, imp := range p.Imports {
				if standard(imp) {
					continue
				}
				ok, typesOnly := tb.allows(i, imp)
				switch j, owned := owner[imp]; {
				case owned && tb.rows[j].testsOnly:
					report(pl, fmt.Sprintf("%s imports %s, which is for tests only (%s:%d)", p.ImportPath, imp, archDoc, tb.rows[j].line))
				case !ok:
					report(pl, fmt.Sprintf("%s imports %s, which %s does not allow", p.ImportPath, imp, where))
				case typesOnly:
					uses, err := funcUses(p, lists[pl][imp])
					if err != nil {
						report(pl, err.Error())
					}
					for _, u := range uses {
						report(pl, fmt.Sprintf("%s: %s names a function, and %s allows only the types of %s", relTo(mod.dir, u), p.ImportPath, where, imp))
					}
				}
			}
			for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
				if standard(imp) {
					continue
				}
				if ok, _ := tb.allows(i, imp); !ok && !tb.allowsTest(p.ImportPath, imp) {
					report(pl, fmt.Sprintf("%s's tests import %s, which neither %s nor the rule for tests allows", p.ImportPath, imp, where))
				}
			}
		}
	}
	for _, r := range tb.rows {
		for _, p := range r.pkgs {
			if !seen[p] {
				msgs = append(msgs, fmt.Sprintf("%s:%d names %s, which is not a package of the module", archDoc, r.line, p))
			}
		}
	}
	for _, msg := range order {
		if len(found[msg]) < len(platforms) {
			msg += fmt.Sprintf(" (on %s)", strings.Join(found[msg], ", "))
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

func sortedPkgs(m map[string]*listed) []*listed {
	ps := make([]*listed, 0, len(m))
	for _, p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *listed) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return ps
}

func relTo(dir, pos string) string {
	if r, err := filepath.Rel(dir, pos); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return pos
}

// funcs caches the exported package-level functions of a package, by
// import path.
var funcs = make(map[string]map[string]bool)

func packageFuncs(dep *listed) (map[string]bool, error) {
	if f, ok := funcs[dep.ImportPath]; ok {
		return f, nil
	}
	f := make(map[string]bool)
	fset := token.NewFileSet()
	for _, name := range slices.Concat(dep.GoFiles, dep.CgoFiles) {
		file, err := parser.ParseFile(fset, filepath.Join(dep.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
				f[fd.Name.Name] = true
			}
		}
	}
	funcs[dep.ImportPath] = f
	return f, nil
}

// funcUses returns the positions in p's non-test files where a function
// of dep is named, each as "file:line: pkg.Func".
func funcUses(p, dep *listed) ([]string, error) {
	if dep == nil {
		return nil, fmt.Errorf("%s: an import is not in go list's output", p.ImportPath)
	}
	fns, err := packageFuncs(dep)
	if err != nil {
		return nil, err
	}
	var uses []string
	fset := token.NewFileSet()
	for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, spec := range file.Imports {
			if strings.Trim(spec.Path.Value, `"`) != dep.ImportPath {
				continue
			}
			local := dep.Name
			if spec.Name != nil {
				local = spec.Name.Name
			}
			if local == "." {
				uses = append(uses, fmt.Sprintf("%s: a dot import of %s", fset.Position(spec.Pos()), dep.ImportPath))
				continue
			}
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && fns[sel.Sel.Name] {
					pos := fset.Position(sel.Pos())
					uses = append(uses, fmt.Sprintf("%s:%d: %s.%s", pos.Filename, pos.Line, local, sel.Sel.Name))
				}
				return true
			})
		}
	}
	return uses, nil
}

// The changes that TestPackageMapFailsWhenWrong makes to the document.

func replaceOnce(t *testing.T, doc, old, new string) string {
	t.Helper()
	if strings.Count(doc, old) != 1 {
		t.Fatalf("%q occurs %d times in %s, want once", old, strings.Count(doc, old), archDoc)
	}
	return strings.Replace(doc, old, new, 1)
}

// rowLine returns the index of the line of the row whose first cell
// begins with pkg.
func rowLine(t *testing.T, lines []string, pkg string) int {
	t.Helper()
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| `"+pkg+"`") })
	if i < 0 {
		t.Fatalf("no row for %s in %s", pkg, archDoc)
	}
	return i
}

func dropRow(pkg string) func(*testing.T, string) string {
	return func(t *testing.T, doc string) string {
		lines := strings.Split(doc, "\n")
		i := rowLine(t, lines, pkg)
		return strings.Join(slices.Delete(lines, i, i+1), "\n")
	}
}

func addRow(r string) func(*testing.T, string) string {
	return func(t *testing.T, doc string) string {
		return replaceOnce(t, doc, tableHeader+"\n|---|---|---|\n", tableHeader+"\n|---|---|---|\n"+r+"\n")
	}
}

func setFor(pkg, what string) func(*testing.T, string) string {
	return func(t *testing.T, doc string) string {
		lines := strings.Split(doc, "\n")
		i := rowLine(t, lines, pkg)
		cells := strings.Split(lines[i], " | ")
		if len(cells) != 3 {
			t.Fatalf("row %q has %d cells", lines[i], len(cells))
		}
		cells[1] = what
		lines[i] = strings.Join(cells, " | ")
		return strings.Join(lines, "\n")
	}
}

func setCell(pkg, cell string) func(*testing.T, string) string {
	return func(t *testing.T, doc string) string {
		lines := strings.Split(doc, "\n")
		i := rowLine(t, lines, pkg)
		j := strings.LastIndex(strings.TrimSuffix(lines[i], " |"), " | ")
		lines[i] = lines[i][:j] + " | " + cell + " |"
		return strings.Join(lines, "\n")
	}
}
