// Package hostile is a hostile MCP server for tests of Switchboard's
// defences against untrusted upstreams: tool poisoning, unicode smuggling,
// shadowing, schema bombs, giant results and frames, image decompression
// bombs, loader injection through the environment, SSRF and malformed
// listings. One server, many modes; each mode is a named constant.
//
// It serves over stdio (a re-executed test binary: TestMain calls
// MaybeRunChild, and the mode travels in the server's configured env, see
// ChildEnv) and over Streamable HTTP (Handler, for httptest on 127.0.0.1).
//
// A hostile server must send what go-sdk's server refuses to send (a tools
// array holding null, a tool without inputSchema, duplicate names,
// non-object schemas, invalid UTF-8, a 2 GiB line), so it speaks JSON-RPC
// by hand: newline-delimited frames over stdio, one application/json
// response per POST over HTTP. It answers both eras of the protocol: the
// 2026-07-28 server/discover probe (SEP-2575), and initialize, with
// 2025-06-18.
//
// Only tests import this package. It must not import go-sdk (the SDK would
// sanitise what this package exists to send) nor any Switchboard package:
// it plays the upstream, not the host.
package hostile

import (
	"fmt"
	"net/http"
	"os"
)

// Environment variables. The launcher filters the child's environment, so
// a test passes them in the server's configured env.
const (
	// ModeVar selects the mode a re-executed test binary serves.
	ModeVar = "SWITCHBOARD_HOSTILE_MODE"
	// VictimVar names another server's tool that the poison and shadow
	// modes target. Default DefaultVictim.
	VictimVar = "SWITCHBOARD_HOSTILE_VICTIM"
	// CanaryVar is a URL the test listens on: a host that fetches it has
	// been tricked into a request (SSRF). Default DefaultCanary.
	CanaryVar = "SWITCHBOARD_HOSTILE_CANARY"
	// RedirectVar is where Handler(ModeRedirect) redirects. Default: the
	// canary URL.
	RedirectVar = "SWITCHBOARD_HOSTILE_REDIRECT"
)

// Defaults of the environment variables.
const (
	DefaultVictim = "victim_send_email"
	DefaultCanary = "http://127.0.0.1:9/x.json" // discard port: nothing answers
)

// Modes. Every mode's tools/list also holds the benign tool ok_echo
// ({text string} → text), so a test can show the benign tool still works
// next to the hostile ones.
const (
	// ModePoison: descriptions carrying prompt injections (the
	// <IMPORTANT> ~/.ssh/id_rsa exfiltration, "ignore previous
	// instructions", a mention of the victim tool), an injection in a
	// property description and in a tool result, an icon on the canary
	// URL, a poisoned prompt and resources, and 64 KiB of server
	// instructions with an injection in the middle.
	ModePoison = "poison"
	// ModeUnicode: zero-width characters, bidi overrides, tag characters,
	// variation selectors, C0 and C1 controls and ANSI/OSC escapes in a
	// description; tool names holding U+200B (one of them renders exactly
	// as ok_echo); a title with bidi overrides; a prompt description with
	// tag characters; raw invalid UTF-8 bytes in a description; a tool,
	// rpc_error, answering with a JSON-RPC error whose message is
	// ErrorText.
	ModeUnicode = "unicode"
	// ModeShadow: a tool named like the victim's tool, whose description
	// tells the model to BCC the attacker when calling the victim.
	ModeShadow = "shadow"
	// ModeSchema: schema bombs and oddities: DeepLevels of nesting,
	// BigSchemaSize bytes, SubschemaCount subschemas, a remote $ref to the
	// canary, a relative $ref, a $ref cycle, a JSON array, a string-typed
	// schema, no inputSchema, and a valid schema without "properties".
	ModeSchema = "schema"
	// ModeListing: a tools array holding null, 42, "str", empty and
	// duplicate names and a LongNameLen-character name.
	ModeListing = "listing"
	// ModeMany: ok_echo, then ManyTools valid tools.
	ModeMany = "many"
	// ModeResults: tools returning giant, deep, many-block, invalid UTF-8
	// and image results, among them a decompression-bomb PNG.
	ModeResults = "results"
	// ModeBigFrame: tool flood answers with one line of "bytes" bytes
	// (default DefaultFloodBytes), streamed from one FloodChunk buffer.
	ModeBigFrame = "bigframe"
	// ModeEnv: tool env_dump reports the loader variables and any secret
	// or token that reached the server's environment.
	ModeEnv = "env"
	// ModeSampling: tool ask sends sampling/createMessage and
	// elicitation/create to the client mid-call (stdio only); tools whose
	// annotations lie (annotated_readonly) or warn (rm_rf).
	ModeSampling = "sampling"
	// ModeRedirect (HTTP only): every request is answered with 307 to the
	// URL in RedirectVar. See RedirectHandler.
	ModeRedirect = "redirect"
)

// Modes lists every mode, in the order of the constants.
var Modes = []string{
	ModePoison, ModeUnicode, ModeShadow, ModeSchema, ModeListing, ModeMany,
	ModeResults, ModeBigFrame, ModeEnv, ModeSampling, ModeRedirect, ModeEscape,
}

// Sizes of the hostile payloads, for tests' assertions.
const (
	InstructionsSize  = 64 << 10 // poison's server instructions, in bytes
	DeepLevels        = 10000    // nesting of schema's deep_schema and results' deep_structured
	BigSchemaSize     = 1 << 20  // schema's big_schema inputSchema is at least this many bytes
	SubschemaCount    = 5000     // subschemas of schema's many_subschemas
	ManyTools         = 5000     // hostile tools of ModeMany, beside ok_echo
	LongNameLen       = 300      // length of listing's long tool name
	BigTextSize       = 2 << 20  // results' big_text, in bytes
	ManyBlocks        = 500      // content blocks of results' many_blocks
	SmallImages       = 6        // images of results' six_images
	HugeImageBase64   = 6 << 20  // base64 length of results' huge_image
	BombSide          = 100000   // width and height claimed by results' png_bomb
	DefaultFloodBytes = 2 << 30  // flood's line length when "bytes" is absent
	FloodChunk        = 64 << 10 // flood writes from one buffer of this size
)

// ChildEnv returns the env entries that make a re-executed test binary
// serve mode.
func ChildEnv(mode string) map[string]string {
	return map[string]string{ModeVar: mode}
}

// MaybeRunChild serves the mode named by ModeVar on stdin and stdout and
// exits when stdin ends; when ModeVar is unset it returns. Call it first in
// TestMain.
func MaybeRunChild() {
	mode := os.Getenv(ModeVar)
	if mode == "" {
		return
	}
	s, err := newServer(mode, configFromEnv())
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(2)
	}
	if err := newStdio(s, os.Stdin, os.Stdout).run(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Handler serves mode over Streamable HTTP, statelessly: each POSTed
// JSON-RPC request gets one application/json response, notifications and
// responses get 202, any other method 405. It reads VictimVar, CanaryVar
// and RedirectVar now. Server-to-client requests need stdio: over HTTP,
// sampling's ask answers with a tool error. An unknown mode panics.
func Handler(mode string) http.Handler {
	cfg := configFromEnv()
	if mode == ModeRedirect {
		target := os.Getenv(RedirectVar)
		if target == "" {
			target = cfg.canary
		}
		return RedirectHandler(target)
	}
	s, err := newServer(mode, cfg)
	if err != nil {
		panic("hostile: " + err.Error())
	}
	return &httpHandler{srv: s}
}

// RedirectHandler answers every request, whatever its method, with 307
// Temporary Redirect to target: a client that follows it re-sends its POST
// there, which is how an upstream steers a host to an internal address.
func RedirectHandler(target string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	})
}

// Catalogue returns what mode advertises, entry by entry as written on the
// wire, read with the current environment (VictimVar, CanaryVar). It
// returns nil for ModeRedirect and for unknown modes.
func Catalogue(mode string) *Listing {
	s, err := newServer(mode, configFromEnv())
	if err != nil {
		return nil
	}
	return s.spec.listing()
}

// A Listing is what a mode advertises.
type Listing struct {
	Instructions      string
	Tools             []Entry // tools/list, in order
	Prompts           []Entry // prompts/list
	Resources         []Entry // resources/list
	ResourceTemplates []Entry // resources/templates/list
}

// An Entry is one element of a list result.
type Entry struct {
	// Name is the entry's "name", or "" when it has none (null, 42).
	Name string
	// JSON is the entry exactly as written on the wire. It may hold
	// invalid UTF-8, and nest deeper than encoding/json will decode.
	JSON []byte
}

// ToolNames returns the names of l's tools, in order, duplicates kept and
// entries without a name left out.
func (l *Listing) ToolNames() []string {
	var names []string
	for _, e := range l.Tools {
		if e.Name != "" {
			names = append(names, e.Name)
		}
	}
	return names
}

// config is what a server reads from its environment, once.
type config struct {
	victim string // VictimVar
	canary string // CanaryVar
}

func configFromEnv() config {
	c := config{victim: os.Getenv(VictimVar), canary: os.Getenv(CanaryVar)}
	if c.victim == "" {
		c.victim = DefaultVictim
	}
	if c.canary == "" {
		c.canary = DefaultCanary
	}
	return c
}
