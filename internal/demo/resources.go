package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/server"
)

// URIs of the demo resources.
const (
	readmeURI     = "demo://readme"
	logoURI       = "demo://logo.png"
	notesTemplate = "demo://notes/{id}"
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

func addResources(s *server.Server) {
	must(s.AddResource(server.Resource{
		URI:         readmeURI,
		Name:        "readme",
		Title:       "About the demo server",
		Description: "What this demo server offers and why.",
		MIMEType:    "text/markdown",
		Size:        int64(len(readme)),
	}, func(context.Context) (*server.Contents, error) {
		return &server.Contents{Text: readme}, nil
	}))

	must(s.AddResource(server.Resource{
		URI:         logoURI,
		Name:        "logo",
		Title:       "Demo logo",
		Description: fmt.Sprintf("A %dx%d PNG gradient, served as a binary blob.", logoSize, logoSize),
		MIMEType:    "image/png",
		Size:        int64(len(logoPNG())),
	}, func(context.Context) (*server.Contents, error) {
		return &server.Contents{Blob: logoPNG()}, nil
	}))

	must(server.AddTemplate(s, server.ResourceTemplate{
		URITemplate: notesTemplate,
		Name:        "note",
		Title:       "Demo notes",
		Description: "A short note by id. Known ids: " + strings.Join(noteIDs(), ", ") + ".",
		MIMEType:    "text/plain",
	}, readNote))
}

// must panics on a registration error: the demo's registrations are fixed
// at compile time, so an error is a bug caught by any test.
func must(err error) {
	if err != nil {
		panic("demo: " + err.Error())
	}
}

// noteVars are the variables of demo://notes/{id}; package server has
// percent-decoded id already.
type noteVars struct {
	ID string `json:"id"`
}

// readNote serves demo://notes/{id}. Package server only calls it for URIs
// that match the template; an id that is not a known note returns nil, which
// the client gets as the spec's not-found error (-32602 with the URI in
// data, SEP-2164), never an empty result.
func readNote(_ context.Context, _ string, v noteVars) (*server.Contents, error) {
	body, ok := notes[v.ID]
	if !ok {
		return nil, nil
	}
	return &server.Contents{Text: fmt.Sprintf("Note %q\n\n%s\n", v.ID, body)}, nil
}

func addPrompts(s *server.Server) {
	server.MustAddPrompt(s, server.Prompt{
		Name:        "review",
		Title:       "Review code",
		Description: "Asks the model to review a piece of code.",
	}, review)
}

// reviewArgs are the review prompt's arguments: code is required (no
// omitempty), language optional.
type reviewArgs struct {
	Code     string `json:"code" jsonschema:"the code to review"`
	Language string `json:"language,omitempty" jsonschema:"the code's language, e.g. go; optional"`
}

// review builds the review prompt. Blank code is a bad request, like missing
// code, so it is a JSON-RPC invalid-params error rather than a result.
func review(_ context.Context, a reviewArgs) ([]*mcp.PromptMessage, error) {
	code := a.Code
	if strings.TrimSpace(code) == "" {
		return nil, server.InvalidParams(`prompt "review": missing required argument "code"`)
	}
	language := strings.TrimSpace(a.Language)

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
	return []*mcp.PromptMessage{server.UserText(text)}, nil
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
