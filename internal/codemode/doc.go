// Package codemode runs a model's short JavaScript program that calls
// tools, in a sandbox: QuickJS (modernc.org/quickjs, the C engine
// translated to pure Go) in a fresh runtime per run, with hard limits on
// memory, JavaScript CPU time, wall time, tool calls, source and output
// size, and nothing of the host in reach: no file, network, process or
// module access, and no clock (Date.now and new Date() throw). The only
// way out is the tool functions the caller hands in, each made through
// the caller's Call (host makes it a call of the caller's view, so every
// inner call meets the same decisions as a direct one).
//
// It also writes the TypeScript-style declarations of those tools from
// their input and output schemas (decl.go).
//
// Why QuickJS and the measured numbers: docs/CODEMODE.md. Imports only the
// engine and fault.
package codemode
