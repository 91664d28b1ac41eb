// Package catalog holds what one MCP server offers: its tools, resources,
// resource templates and prompts, drained page by page, and its
// instructions. internal/upstream fills a Catalog at discovery,
// internal/ingest vets one, and host keeps, saves and aggregates them.
package catalog

import "github.com/modelcontextprotocol/go-sdk/mcp"

// Catalog is everything a server offers, drained page by page.
type Catalog struct {
	Tools     []*mcp.Tool
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
	Prompts   []*mcp.Prompt
	// Instructions are the server's instructions from the handshake, as
	// sent.
	Instructions string
	// Skipped says which entries of the lists were dropped because they
	// could not be decoded at all (tools: [42]).
	Skipped []string
	// Missing names the list methods the server's capabilities declared
	// but that it answered with "method not found" ("resources/list"):
	// those lists are taken as empty.
	Missing []string
	// Failed says which of the lists other than tools the server answered
	// with another JSON-RPC error ("resources/list: connect ECONNREFUSED
	// 127.0.0.1:5432"): taken as empty until the next discovery, so that
	// its tools still work.
	Failed []string
	// Stray says what a stdio server wrote on stdout that was not JSON-RPC
	// by the end of discovery (skipped, kept with its stderr): how many
	// lines, and the first, escaped. "" when there was none.
	Stray string
}
