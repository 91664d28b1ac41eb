package archtest

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// This file reads the package map of archDoc: its table and its rule for
// tests, in the grammar written above the table.

// itemKind is the kind of an entry of a "may import" cell.
type itemKind int

const (
	stdlibItem itemKind = iota // stdlib
	pkgItem                    // one package of the module
	treeItem                   // a package and every package under it: `a/...`, a third-party module, go-sdk
	belowItem                  // everything below
	ownItem                    // their own package (the rule for tests only)
)

// item is one entry of a "may import" cell.
type item struct {
	kind  itemKind
	path  string // import path, for pkgItem and treeItem
	types bool   // only types, constants and variables may be named
}

func (it item) String() string {
	s := [...]string{"stdlib", "pkg", "tree", "below", "own"}[it.kind] + " " + it.path
	if it.types {
		s += " types"
	}
	return s
}

// row is one row of the package map.
type row struct {
	line      int      // in archDoc, from 1
	pkgs      []string // import paths
	testsOnly bool     // what it is for begins "Tests only"
	allow     []item
}

// table is the package map and the rule for tests.
type table struct {
	rows  []row
	tests []item
}

const tableHeader = "| package | what it is for | may import |"

// parseTable reads the package map out of the architecture document: the
// table under "## Package map" and its paragraph beginning "**Tests**".
func parseTable(doc []byte, mod string) (table, error) {
	var tb table
	lines := strings.Split(string(doc), "\n")
	start := slices.Index(lines, "## Package map")
	if start < 0 {
		return tb, errors.New(`no "## Package map" section`)
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") {
			end = i
			break
		}
	}
	var errs []error
	sawHeader := false
	for i := start + 1; i < end; i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == tableHeader:
			if sawHeader {
				errs = append(errs, fmt.Errorf("line %d: a second package table", i+1))
			}
			sawHeader = true
			i++ // the |---| line
			for i+1 < end && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "|") {
				i++
				r, err := parseRow(strings.TrimSpace(lines[i]), mod)
				if err != nil {
					errs = append(errs, fmt.Errorf("line %d: %v", i+1, err))
					continue
				}
				r.line = i + 1
				tb.rows = append(tb.rows, r)
			}
		case strings.HasPrefix(l, "**Tests**"):
			para := l
			for i+1 < end && strings.TrimSpace(lines[i+1]) != "" {
				i++
				para += " " + strings.TrimSpace(lines[i])
			}
			items, err := parseTestsRule(para, mod)
			if err != nil {
				errs = append(errs, fmt.Errorf("the paragraph on tests: %v", err))
			}
			tb.tests = items
		}
	}
	if !sawHeader {
		errs = append(errs, fmt.Errorf("no table with the header %q", tableHeader))
	}
	if tb.tests == nil {
		errs = append(errs, errors.New(`no paragraph beginning "**Tests**"`))
	}
	return tb, errors.Join(errs...)
}

// parseRow parses "| `a`, `…/b` | what | may import |"; `…/b` is a/b.
func parseRow(l, mod string) (row, error) {
	var r row
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|"), "|")
	if len(cells) != 3 {
		return r, fmt.Errorf("%d cells, want 3", len(cells))
	}
	first := ""
	for f := range strings.SplitSeq(cells[0], ",") {
		f = strings.TrimSpace(f)
		p, ok := backticked(f)
		if !ok {
			return r, fmt.Errorf("package %q is not a path in backticks", f)
		}
		if rest, ok := strings.CutPrefix(p, "…/"); ok {
			if first == "" {
				return r, fmt.Errorf("%q has no package before it", f)
			}
			p = first + "/" + rest
		}
		if !validRel(p) {
			return r, fmt.Errorf("package %q is not a path from the module root", f)
		}
		if first == "" {
			first = p
		}
		r.pkgs = append(r.pkgs, mod+"/"+p)
	}
	r.testsOnly = strings.HasPrefix(strings.TrimSpace(cells[1]), "Tests only")
	items, err := parseCell(strings.TrimSpace(cells[2]), mod)
	if err != nil {
		return r, err
	}
	r.allow = items
	return r, nil
}

// parseTestsRule parses the list after "may also import:" up to the end
// of its sentence.
func parseTestsRule(para, mod string) ([]item, error) {
	_, list, ok := strings.Cut(para, "may also import:")
	if !ok {
		return nil, errors.New(`no "may also import:"`)
	}
	// The sentence ends at the first ". " or final "." outside backticks.
	inTick := false
	for i, c := range list {
		if c == '`' {
			inTick = !inTick
		}
		if c == '.' && !inTick && (i+1 == len(list) || list[i+1] == ' ') {
			list = list[:i]
			break
		}
	}
	var items []item
	var rest []string
	for _, f := range splitList(list) {
		if strings.TrimSpace(f) == "their own package" {
			items = append(items, item{kind: ownItem})
			continue
		}
		rest = append(rest, f)
	}
	more, err := parseCell(strings.Join(rest, ","), mod)
	if err != nil {
		return nil, err
	}
	for _, it := range more {
		if it.kind == belowItem || it.types {
			return nil, fmt.Errorf("%v has no meaning for tests", it)
		}
	}
	return append(items, more...), nil
}

// parseCell parses one "may import" cell; the grammar is written above
// the table in archDoc.
func parseCell(cell, mod string) ([]item, error) {
	var items []item
	for _, f := range splitList(cell) {
		f = strings.TrimSpace(f)
		if j := strings.LastIndex(f, " ("); j >= 0 && strings.HasSuffix(f, ")") {
			f = strings.TrimSpace(f[:j]) // a note
		}
		e, types := strings.CutSuffix(f, " types")
		var it item
		switch p, quoted := backticked(e); {
		case e == "stdlib" && !types:
			it = item{kind: stdlibItem}
		case e == "everything below" && !types:
			it = item{kind: belowItem}
		case e == "go-sdk":
			it = item{kind: treeItem, path: goSDK}
		case quoted && thirdParty(p) && validRel(p):
			it = item{kind: treeItem, path: p} // a third-party module
		case quoted && !thirdParty(p) && validRel(strings.TrimSuffix(p, "/...")):
			if rel, ok := strings.CutSuffix(p, "/..."); ok {
				it = item{kind: treeItem, path: mod + "/" + rel}
			} else {
				it = item{kind: pkgItem, path: mod + "/" + p}
			}
		default:
			return nil, fmt.Errorf("%q is not an entry of the grammar written above the table", f)
		}
		it.types = types
		items = append(items, it)
	}
	return items, nil
}

// splitList splits a cell at commas and semicolons outside backticks and
// parentheses.
func splitList(s string) []string {
	var out []string
	inTick, depth, from := false, 0, 0
	for i, c := range s {
		switch {
		case c == '`':
			inTick = !inTick
		case inTick:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case (c == ',' || c == ';') && depth == 0:
			out = append(out, s[from:i])
			from = i + 1
		}
	}
	return append(out, s[from:])
}

// thirdParty reports whether a path in a cell is a third-party module's:
// its first element has a dot, as a domain name does.
func thirdParty(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return strings.Contains(first, ".") && !strings.HasPrefix(first, ".")
}

// backticked returns what is between the backticks of "`x`".
func backticked(s string) (string, bool) {
	if len(s) < 3 || s[0] != '`' || s[len(s)-1] != '`' {
		return "", false
	}
	p := s[1 : len(s)-1]
	return p, !strings.ContainsAny(p, "` \t")
}

// validRel reports whether p is a clean path below the module root.
func validRel(p string) bool {
	return p != "" && !strings.ContainsAny(p, "` \t\\") && !strings.HasPrefix(p, "/") &&
		filepath.ToSlash(filepath.Clean(p)) == p && p != "." && !strings.HasPrefix(p, "../")
}

func TestParseCell(t *testing.T) {
	const mod = "example.com/m"
	tests := []struct {
		cell string
		want []item
		err  bool
	}{
		{cell: "stdlib", want: []item{{kind: stdlibItem}}},
		{cell: "`config`", want: []item{{kind: pkgItem, path: mod + "/config"}}},
		{cell: "`internal/upstream` types", want: []item{{kind: pkgItem, path: mod + "/internal/upstream", types: true}}},
		{cell: "`internal/testkit/...`", want: []item{{kind: treeItem, path: mod + "/internal/testkit"}}},
		{cell: "stdlib; `modernc.org/sqlite`", want: []item{{kind: stdlibItem}, {kind: treeItem, path: "modernc.org/sqlite"}}},
		{cell: "`modernc.org/sqlite`", want: []item{{kind: treeItem, path: "modernc.org/sqlite"}}},
		{cell: "go-sdk", want: []item{{kind: treeItem, path: goSDK}}},
		{cell: "go-sdk types", want: []item{{kind: treeItem, path: goSDK, types: true}}},
		{cell: "`config`, everything below, go-sdk", want: []item{
			{kind: pkgItem, path: mod + "/config"}, {kind: belowItem}, {kind: treeItem, path: goSDK}}},
		{cell: "`internal/launcher` (escaping, and only that), `fault`", want: []item{
			{kind: pkgItem, path: mod + "/internal/launcher"}, {kind: pkgItem, path: mod + "/fault"}}},
		{cell: "`a`; `b`", want: []item{{kind: pkgItem, path: mod + "/a"}, {kind: pkgItem, path: mod + "/b"}}},
		{cell: "", err: true},
		{cell: "config", err: true},
		{cell: "std lib", err: true},
		{cell: "`config` `fault`", err: true},
		{cell: "`config`,", err: true},
		{cell: "``", err: true},
		{cell: "`con fig`", err: true},
		{cell: "stdlib types", err: true},
		{cell: "everything below types", err: true},
		{cell: "everything", err: true},
		{cell: "(a note alone)", err: true},
		{cell: "`/abs`", err: true},
		{cell: "`../up`", err: true},
	}
	for _, tt := range tests {
		got, err := parseCell(tt.cell, mod)
		if tt.err {
			if err == nil {
				t.Errorf("parseCell(%q) = %v, want an error", tt.cell, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseCell(%q) = %v, %v; want %v", tt.cell, got, err, tt.want)
		}
	}
}

func FuzzParseCell(f *testing.F) {
	for _, s := range []string{"stdlib", "`config`, everything below, go-sdk types", "`a/...` (note); `x.org/y`", "`", "(", "types"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cell string) {
		items, err := parseCell(cell, "example.com/m")
		if err != nil {
			return
		}
		if len(items) == 0 {
			t.Fatalf("parseCell(%q) gave no items and no error", cell)
		}
		for _, it := range items {
			if (it.kind == pkgItem || it.kind == treeItem) && (it.path == "" || strings.ContainsAny(it.path, " `")) {
				t.Fatalf("parseCell(%q) gave a bad path %q", cell, it.path)
			}
		}
	})
}
