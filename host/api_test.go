package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// api is every method of Host, each a thing a Go program driving an agent
// needs. A method added or taken out is a decision about the library: make
// it here too. What only the gateway, the status page or the command line
// need is internal/hostlink's; a caller's lists are View's.
var api = []string{
	"Approve",      // release a held definition
	"Audit",        // query the audit log
	"Call",         // call a tool
	"Close",        // stop every server
	"DecideCall",   // approve or deny a call held for a person
	"Findings",     // what vetting found in the servers' metadata
	"GetPrompt",    // render a prompt
	"Held",         // the definitions held back, with their diffs
	"HeldCalls",    // the calls held for a person
	"Login",        // a server's OAuth login
	"ReadResource", // read a resource
	"Ready",        // wait for servers to start
	"Reload",       // apply a new configuration
	"Restart",      // restart a server
	"Search",       // search the tools
	"Servers",      // the servers' status
	"Tools",        // every tool, deferred ones marked
	"View",         // what one caller may see and do
}

// TestHostAPI: Host's methods, as go doc lists them, are the agreed list.
func TestHostAPI(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			recv := fd.Recv.List[0].Type
			if st, ok := recv.(*ast.StarExpr); ok {
				recv = st.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "Host" {
				got = append(got, fd.Name.Name)
			}
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(api))
	for _, m := range got {
		if !slices.Contains(want, m) {
			t.Errorf("Host.%s is not in the agreed API: add it to api with the reason, or unexport it (plumbing belongs in internal/hostlink, a caller's lists on View)", m)
		}
	}
	for _, m := range want {
		if !slices.Contains(got, m) {
			t.Errorf("Host.%s is in the agreed API but not declared", m)
		}
	}
}
