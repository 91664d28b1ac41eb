// Package mcpregistry reads the official MCP registry (its v0.1 API:
// GET /v0.1/servers and GET /v0.1/servers/{name}/versions/{version}) and
// turns a server's server.json into the launch of a Switchboard server.
//
// [Client] lists and searches the registry with its cursors and fetches
// one version of a server ("latest" by default), each answer bounded in
// size and time; its failures are [*Error] values that name the registry
// and the server with a stable [Reason]. [Translate] is pure: from a
// server.json, the package or remote chosen ([Choose]) and the values a
// person gives ([Asker]), it renders the command, arguments, environment,
// URL and headers, with every version exact, since the exact version is
// what pins the package.
//
// A registry's answers are untrusted input: they are decoded into typed
// values, checked for what would be unsafe to run or write into a
// configuration, and fuzzed. Of this module it imports only the leaf
// internal/bytesize (the capped read).
package mcpregistry
