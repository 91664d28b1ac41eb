package pkgpin

import (
	"strings"
	"testing"
)

// FuzzFind: Find never panics, and a package it finds is at the argument
// it names, which Rewrite replaces alone.
func FuzzFind(f *testing.F) {
	for _, s := range []string{"npx\x00-y\x00pkg@latest", "uvx\x00--python\x003.12\x00tool==1.0", "pnpm\x00dlx\x00@s/p@^1", "npm\x00exec\x00--\x00x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		parts := strings.Split(line, "\x00")
		spec, ok := Find(parts[0], parts[1:])
		if !ok {
			return
		}
		args := parts[1:]
		if spec.Arg < 0 || spec.Arg >= len(args) || !strings.HasPrefix(args[spec.Arg], spec.Name) {
			t.Fatalf("Find(%q) = %+v: not at its argument", line, spec)
		}
		out := Rewrite(args, spec, "1.2.3")
		for i := range args {
			if i != spec.Arg && out[i] != args[i] {
				t.Fatalf("Rewrite changed argument %d", i)
			}
		}
		if out[spec.Arg] != spec.Name+"@1.2.3" {
			t.Fatalf("Rewrite = %q", out[spec.Arg])
		}
	})
}
