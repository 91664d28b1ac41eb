// Package archtest holds the module to the rules written in its docs. It
// has no code, only tests:
//
//   - imports_test.go reads the package map in docs/ARCHITECTURE.md and
//     checks, with `go list`, that every package of the module has a row
//     there, that every row names a package, and that every package
//     imports only what its row allows (the table's grammar is written
//     above the table). Test files are checked by the looser rule written
//     there for tests.
//   - comments_test.go checks that no Go comment cites an issue of this
//     project or a work session: comments say what is. Upstream
//     references that explain why code exists (go.dev/issue/N,
//     golang/go#N, go-sdk #N, go-sdk issue #N, owner/repo#N) are allowed.
//
// In the style of tailscale's tstest/deptest: a rule that is written down
// is a rule that a test checks. It imports nothing, and nothing may import
// it.
package archtest
