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
// ServeHTTP serves both protocol eras on one endpoint: requests of the
// sessionless 2026-07-28 era go to a stateless go-sdk handler and the rest to
// a stateful one (package mcphttp says why this split is needed).
//
// This package must not import any other Switchboard package but the leaf
// internal/mcphttp (HTTP serving shared with the gateway): the CLI and the
// test kit import it, and it has to stay a faithful, independent MCP peer
// built on go-sdk.
package demo
