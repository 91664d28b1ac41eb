// Package demo is Switchboard's demo MCP server.
//
// It is what `switchboard demo-server` serves (over stdio, or Streamable HTTP
// with --http), the embedded default server a new user sees first, and a test
// peer for the host. Its features are chosen to exercise what an MCP host must
// handle rather than to be useful:
//
//   - tools with plain text, structured output (with an output schema), image
//     content, progress notifications, cancellation and tool errors
//     (isError: true);
//   - fixed text and blob resources, a resource template with a not-found
//     path, a prompt with required and optional arguments, and server
//     instructions.
//
// Every answer is computed from the request alone: the server never reads
// the environment, the file system or the network, so it is safe to run
// anywhere and its answers are deterministic (tests rely on that).
//
// It is built with Switchboard's public server package: the tools'
// schemas are inferred from Go types, the notes template is matched and
// decoded by it, and it serves both protocol eras per request, over stdio
// and on one Streamable HTTP endpoint.
//
// It is built on the public server package alone: the CLI serves it and
// the host's tests run it, and it has to stay a faithful, independent MCP
// peer.
package demo
