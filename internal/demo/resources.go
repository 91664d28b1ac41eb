package demo

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URIs of the demo resources.
const (
	readmeURI     = "demo://readme"
	logoURI       = "demo://logo.png"
	notesTemplate = "demo://notes/{id}"
	notesPrefix   = "demo://notes/"
)

// notes are the instances of the demo://notes/{id} template. Any other id is
// not found.
var notes = map[string]string{
	"welcome":  "Switchboard connects agents to MCP servers through one host. This note came from a resource template.",
	"tools":    "Try slow with a progress token, then cancel it; try fail to see a tool error next to a protocol error.",
	"protocol": "Over HTTP this server speaks both the 2026-07-28 (sessionless) and the earlier session-based protocol.",
}

// noteIDs returns the known note ids, sorted.
func noteIDs() []string {
	ids := make([]string, 0, len(notes))
	for id := range notes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// readme is the text of demo://readme.
var readme = `# Switchboard demo server

This MCP server ships with Switchboard. It shows, and lets you test, what an MCP host must handle.
Its data is made up and deterministic; it never touches the network, files or environment.

## Tools

| tool | what it does |
| --- | --- |
| echo | returns ` + "`text`" + ` unchanged |
| add | adds ` + "`a`" + ` and ` + "`b`" + `; structured output ` + "`{\"sum\": …}`" + ` |
| slow | waits ` + "`steps`" + ` × ` + "`delay_ms`" + `, reporting progress; can be cancelled |
| image | returns a ` + size(imageSize) + ` PNG gradient |
| weather | a made-up report for ` + "`city`" + ` as structured content with an output schema |
| fail | always returns a tool error (isError: true) |

## Resources

- ` + "`" + readmeURI + "`" + ` — this text (text/markdown)
- ` + "`" + logoURI + "`" + ` — a ` + size(logoSize) + ` PNG (a binary blob)
- ` + "`" + notesTemplate + "`" + ` — notes; known ids: ` + strings.Join(noteIDs(), ", ") + `; any other id is not found

## Prompts

- ` + "`review`" + ` — asks for a code review; arguments ` + "`code`" + ` (required) and ` + "`language`" + ` (optional)
`

// size formats a square picture's size, e.g. 16×16.
func size(n int) string { return fmt.Sprintf("%d×%d", n, n) }

func addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{
		URI:         readmeURI,
		Name:        "readme",
		Title:       "About the demo server",
		Description: "What this demo server offers and why.",
		MIMEType:    "text/markdown",
		Size:        int64(len(readme)),
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: readmeURI, MIMEType: "text/markdown", Text: readme},
		}}, nil
	})

	s.AddResource(&mcp.Resource{
		URI:         logoURI,
		Name:        "logo",
		Title:       "Demo logo",
		Description: fmt.Sprintf("A %dx%d PNG gradient, served as a binary blob.", logoSize, logoSize),
		MIMEType:    "image/png",
		Size:        int64(len(logoPNG())),
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: logoURI, MIMEType: "image/png", Blob: logoPNG()},
		}}, nil
	})

	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: notesTemplate,
		Name:        "note",
		Title:       "Demo notes",
		Description: "A short note by id. Known ids: " + strings.Join(noteIDs(), ", ") + ".",
		MIMEType:    "text/plain",
	}, readNote)
}

// readNote serves demo://notes/{id}. go-sdk only calls it for URIs that match
// the template; an id that is not a known note gets the spec's not-found error
// (-32602 with the URI in data, SEP-2164), never an empty result.
func readNote(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rawID, ok := strings.CutPrefix(uri, notesPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	id, err := url.PathUnescape(rawID)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	body, ok := notes[id]
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("Note %q\n\n%s\n", id, body)},
	}}, nil
}

func addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{
		Name:        "review",
		Title:       "Review code",
		Description: "Asks the model to review a piece of code.",
		Arguments: []*mcp.PromptArgument{
			{Name: "code", Title: "Code", Description: "the code to review", Required: true},
			{Name: "language", Title: "Language", Description: "the code's language, e.g. go; optional"},
		},
	}, review)
}

// review builds the review prompt. A missing required argument is a bad
// request, so it is a JSON-RPC invalid-params error rather than a result.
func review(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	code := req.Params.Arguments["code"]
	if strings.TrimSpace(code) == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `prompt "review": missing required argument "code"`}
	}
	language := strings.TrimSpace(req.Params.Arguments["language"])

	what, info := "this code", ""
	if language != "" {
		what = fmt.Sprintf("this %s code", language)
		if isFenceInfo(language) {
			info = strings.ToLower(language)
		}
	}
	fence := codeFence(code)
	text := fmt.Sprintf("Please review %s for correctness, clarity and style. "+
		"List concrete problems first, most serious first, then suggestions.\n\n%s%s\n%s\n%s",
		what, fence, info, strings.TrimRight(code, "\n"), fence)
	return &mcp.GetPromptResult{
		Description: "Code review request",
		Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: text}},
		},
	}, nil
}

// codeFence returns a Markdown code fence longer than any run of backticks in
// code, so that code cannot close the fence early (CommonMark §4.5).
func codeFence(code string) string {
	longest, run := 0, 0
	for _, r := range code {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// isFenceInfo reports whether language can be used as a code fence's info
// string: one word without backticks.
func isFenceInfo(language string) bool {
	return !strings.ContainsFunc(language, func(r rune) bool { return r == '`' || unicode.IsSpace(r) })
}
