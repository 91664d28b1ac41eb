// Package archtest holds the module to the rules written in its docs. It
// has no code, only tests:
//
//   - imports_test.go checks, with `go list` for linux and darwin, that
//     every package of the module has a row in the package map of
//     docs/ARCHITECTURE.md, that every row names a package, and that
//     every package imports only what its row allows; test files are
//     checked by the looser rule written there for tests. table_test.go
//     reads the table in the grammar written above it.
//   - comments_test.go checks that no Go comment cites an issue of this
//     project or a work session: comments say what is. Upstream
//     references that explain why code exists (go.dev/issue/N,
//     golang/go#N, go-sdk #N, go-sdk issue #N, owner/repo#N) are allowed.
//
// In the style of tailscale's tstest/deptest: a rule that is written down
// is a rule that a test checks. It imports nothing, and nothing may import
// it.
package archtest
