//go:build unix

// Package launcher starts one stdio MCP server as a subprocess and owns it
// until it is gone: exact argv without a shell, an allowlisted environment, a
// process group of its own, bounded stderr capture, a cap on stdout frames,
// and a bounded, group-wide teardown (close stdin, SIGTERM, SIGKILL, reap).
// It hands the caller a go-sdk [mcp.Transport] over the child's stdio whose
// Close runs that teardown. A line on stdout that is not JSON-RPC is
// skipped, as the TypeScript SDK's client does, and kept with the stderr
// tail (see [Process.Stray]).
//
// The launcher is the bottom of the call flow (CLI or gateway → registry →
// policy → upstream → launcher). Of switchboard's packages it imports only
// the leaves internal/jsonscan (telling JSON-RPC lines from the rest) and
// internal/bytesize (caps named in errors); besides
// the standard library it depends on go-sdk's mcp package and
// Masterminds/semver (runtime version requirements, see [Spec.Runtime]).
// internal/upstream uses it.
//
// The package is Unix-only. On Linux a child additionally dies with the
// host (parent-death signal) and the process group is signalled before the
// child is reaped, so a recycled group ID can never be hit; see sys_linux.go.
// There, when the program calls [MaybeRunShim] first in main, each server
// is the first process of a PID namespace of its own, under a shim
// (shim_linux.go): whatever the server starts dies with it, setsid or not,
// and when the host dies. Where the kernel refuses the namespace, a
// server's process group is recorded in Spec.LeftoverDir and what a killed
// host left of it is killed at the next start (leftover_linux.go).
package launcher
