// Package clientconf knows the configuration files of MCP clients (Claude
// Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex, Gemini CLI): where
// each lives, how to read the servers it holds into neutral entries, and how
// to write the gateway's own entry into it with a backup and take it out
// again.
//
// Reading is lenient: keys only the client understands are reported as
// notes, never errors, and inline secrets are reported so that the caller
// can move them out of the configuration. Writing edits the file in place:
// every byte outside the changed entries is kept (comments and trailing
// commas of JSONC included), the result is checked by parsing it again, and
// the file is replaced atomically.
//
// The package reads and writes the files it is given and nothing else: the
// home directory and environment are parameters (Place), never the
// process's own. It imports no other package of this module but
// internal/suggest.
package clientconf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Transport is how a client reaches a server.
type Transport string

const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http" // Streamable HTTP
	SSE   Transport = "sse"  // the legacy HTTP+SSE transport
)

// Entry is one server of a client's configuration in neutral form. Variable
// references are written ${VAR} whatever the client's own syntax.
type Entry struct {
	Name      string
	Transport Transport
	Command   string
	Args      []string
	Env       map[string]string
	Cwd       string
	URL       string
	Headers   map[string]string
	// BearerTokenEnvVar names a variable holding a bearer token (Codex's
	// bearer_token_env_var).
	BearerTokenEnvVar string
	EnabledTools      []string // nil: all
	DisabledTools     []string
	Disabled          bool
	// Project is the project directory an entry is scoped to (Claude
	// Code's per-project servers in ~/.claude.json); "" for a user entry.
	Project string
}

// Secret is a value that belongs in the credential store rather than in a
// configuration. Read has already replaced it in its Entry by the reference
// ${Name}; the caller stores Value under Name, or, when Prompt is set,
// asks the user for it.
type Secret struct {
	Server string // the entry's name
	Field  string // where it was: "env.API_KEY", "headers.Authorization", "url"
	Name   string // the credential's name, referred to as ${Name}
	Value  string // the inline value; "" when it is to be prompted for
	// Prompt is set for a value the client asks for at start (VS Code's
	// inputs): the text to show.
	Prompt   string
	Password bool // typed input is to be masked
}

// Note says what Read left out or could not carry over, and why.
type Note struct {
	Server string // "" for a key outside any server
	Key    string // the key within the server or file; "" for the whole server
	Reason string
}

func (n Note) String() string {
	switch {
	case n.Server == "":
		return fmt.Sprintf("%s: %s", n.Key, n.Reason)
	case n.Key == "":
		return fmt.Sprintf("server %q: %s", n.Server, n.Reason)
	default:
		return fmt.Sprintf("server %q: %s: %s", n.Server, n.Key, n.Reason)
	}
}

// Result is what Read found in one file.
type Result struct {
	Servers []Entry  // in file order
	Secrets []Secret // in the order of Servers, then fields
	Notes   []Note   // skipped keys and entries, with reasons
}

// Format is the syntax of a client's file.
type Format int

const (
	JSON Format = iota // JSON; comments and trailing commas are accepted and kept
	TOML
)

// Client describes one MCP client's configuration. The values are fixed;
// use Clients or Lookup.
type Client struct {
	ID   string // "claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "codex", "gemini"
	Name string // for people
	Format
	// servers is the path of the object holding the servers, by file
	// base name ("" for any); the first match wins.
	servers []serversAt
	// envPrefix is how the client writes a reference to an environment
	// variable: "env:" for ${env:VAR}, "" for ${VAR}. noRefs: the client
	// expands nothing.
	envPrefix string
	noRefs    bool
	// urlKey is the key of a Streamable HTTP server's URL when writing.
	urlKey string
	// typed: the client's entries carry "type".
	typed bool
	// bareURL is what an entry with a "url" and no "type" means.
	bareURL Transport
	// stdioOnly: the client's file cannot hold a remote server.
	stdioOnly bool
	// dedicated: the file holds MCP servers only, so its other top-level
	// keys are worth a note.
	dedicated bool
	// dollarRefs: bare $VAR is a reference too (Gemini CLI).
	dollarRefs bool
	paths      func(p Place) []string
	// project is the client's file in a project directory, relative to
	// it; "" when the client has none.
	project string
}

type serversAt struct {
	base string
	path []string
}

// Place is where a client's files are looked for: a home directory, an
// operating system (GOOS values) and an environment.
type Place struct {
	Home   string
	OS     string              // "" means "linux"
	Getenv func(string) string // nil: no variables set
}

func (p Place) env(k string) string {
	if p.Getenv == nil {
		return ""
	}
	return p.Getenv(k)
}

// configDir is the per-user application data directory: Application
// Support on macOS, %APPDATA% on Windows, $XDG_CONFIG_HOME or ~/.config
// elsewhere.
func (p Place) configDir() string {
	switch p.OS {
	case "darwin":
		return filepath.Join(p.Home, "Library", "Application Support")
	case "windows":
		if d := p.env("APPDATA"); d != "" {
			return d
		}
		return filepath.Join(p.Home, "AppData", "Roaming")
	}
	if d := p.env("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(p.Home, ".config")
}

var clients = []*Client{
	{
		ID: "claude-desktop", Name: "Claude Desktop", Format: JSON,
		servers: []serversAt{{"", []string{"mcpServers"}}},
		noRefs:  true, stdioOnly: true, dedicated: true, bareURL: HTTP, urlKey: "url",
		paths: func(p Place) []string {
			return []string{filepath.Join(p.configDir(), "Claude", "claude_desktop_config.json")}
		},
	},
	{
		ID: "claude-code", Name: "Claude Code", Format: JSON, project: ".mcp.json",
		servers: []serversAt{{"", []string{"mcpServers"}}},
		typed:   true, bareURL: HTTP, urlKey: "url",
		paths: func(p Place) []string {
			if d := p.env("CLAUDE_CONFIG_DIR"); d != "" {
				return []string{filepath.Join(d, ".claude.json"), filepath.Join(p.Home, ".claude.json")}
			}
			return []string{filepath.Join(p.Home, ".claude.json")}
		},
	},
	{
		ID: "cursor", Name: "Cursor", Format: JSON, project: filepath.Join(".cursor", "mcp.json"),
		servers:   []serversAt{{"", []string{"mcpServers"}}},
		envPrefix: "env:", dedicated: true, bareURL: HTTP, urlKey: "url",
		paths: func(p Place) []string {
			return []string{filepath.Join(p.Home, ".cursor", "mcp.json")}
		},
	},
	{
		ID: "vscode", Name: "VS Code", Format: JSON, project: filepath.Join(".vscode", "mcp.json"),
		servers: []serversAt{
			{"settings.json", []string{"mcp", "servers"}},
			{"", []string{"servers"}},
		},
		envPrefix: "env:", typed: true, dedicated: true, bareURL: HTTP, urlKey: "url",
		paths: func(p Place) []string {
			u := filepath.Join(p.configDir(), "Code", "User")
			return []string{filepath.Join(u, "mcp.json"), filepath.Join(u, "settings.json")}
		},
	},
	{
		ID: "windsurf", Name: "Windsurf", Format: JSON,
		servers:   []serversAt{{"", []string{"mcpServers"}}},
		envPrefix: "env:", dedicated: true, bareURL: HTTP, urlKey: "serverUrl",
		paths: func(p Place) []string {
			return []string{filepath.Join(p.Home, ".codeium", "windsurf", "mcp_config.json")}
		},
	},
	{
		ID: "codex", Name: "Codex", Format: TOML, project: filepath.Join(".codex", "config.toml"),
		servers: []serversAt{{"", []string{"mcp_servers"}}},
		bareURL: HTTP, urlKey: "url",
		paths: func(p Place) []string {
			if d := p.env("CODEX_HOME"); d != "" {
				return []string{filepath.Join(d, "config.toml")}
			}
			return []string{filepath.Join(p.Home, ".codex", "config.toml")}
		},
	},
	{
		ID: "gemini", Name: "Gemini CLI", Format: JSON, project: filepath.Join(".gemini", "settings.json"),
		servers:    []serversAt{{"", []string{"mcpServers"}}},
		dollarRefs: true, bareURL: SSE, urlKey: "httpUrl",
		paths: func(p Place) []string {
			return []string{filepath.Join(p.Home, ".gemini", "settings.json")}
		},
	},
}

// Clients returns every known client, in a fixed order.
func Clients() []*Client { return slices.Clone(clients) }

// Lookup returns the client with that ID; the error suggests the nearest.
func Lookup(id string) (*Client, error) {
	best, bestD := "", 1<<30
	for _, c := range clients {
		if c.ID == id {
			return c, nil
		}
		if d := suggest.Distance(id, c.ID); d < bestD {
			best, bestD = c.ID, d
		}
	}
	if bestD <= 3 {
		return nil, fmt.Errorf("unknown client %q (did you mean %q?)", id, best)
	}
	ids := make([]string, len(clients))
	for i, c := range clients {
		ids[i] = c.ID
	}
	return nil, fmt.Errorf("unknown client %q (known: %s)", id, strings.Join(ids, ", "))
}

// Paths returns where the client keeps its user configuration at p, most
// preferred first.
func (c *Client) Paths(p Place) []string { return c.paths(p) }

// ProjectPath returns the client's file for the project in dir (Claude
// Code's .mcp.json, .cursor/mcp.json, .vscode/mcp.json, .codex/config.toml,
// .gemini/settings.json), or "" for a client without one.
func (c *Client) ProjectPath(dir string) string {
	if c.project == "" {
		return ""
	}
	return filepath.Join(dir, c.project)
}

// Find returns the first of c.Paths(p) that exists; when none does, the
// first path and false (where a new file would be written).
func (c *Client) Find(p Place) (path string, exists bool) {
	ps := c.paths(p)
	for _, path := range ps {
		if _, err := os.Stat(path); err == nil {
			return path, true
		}
	}
	return ps[0], false
}

// serversPath is the path of the servers object in the file at path.
func (c *Client) serversPath(path string) []string {
	base := filepath.Base(path)
	for _, s := range c.servers {
		if s.base == "" || s.base == base {
			return s.path
		}
	}
	return c.servers[len(c.servers)-1].path
}

// Sniff picks the client whose shape a file has, for a file given by name:
// TOML is Codex; JSON with a top-level "servers" object is VS Code, with
// "mcp" holding "servers" VS Code settings; anything else is read as Claude
// Code's mcpServers shape, the widest of the mcpServers dialects.
func Sniff(path string, data []byte) *Client {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return mustLookup("codex")
	}
	if top, err := topKeys(data); err == nil {
		if top["servers"] && !top["mcpServers"] {
			return mustLookup("vscode")
		}
	}
	return mustLookup("claude-code")
}

func mustLookup(id string) *Client {
	c, err := Lookup(id)
	if err != nil {
		panic(err)
	}
	return c
}

// Found is a client file that exists.
type Found struct {
	Client  *Client
	Path    string
	Project bool // the file of the project directory, not the user's
}

// Discover lists the client files that exist at p, user files first in
// client order, then those of the project in dir ("" for none). A file is
// listed once: run from the home directory, a client's project file is
// its user file (~/.cursor/mcp.json), and is that.
func Discover(p Place, dir string) []Found {
	var out []Found
	var seen []os.FileInfo
	add := func(c *Client, path string, project bool) {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || slices.ContainsFunc(seen, func(s os.FileInfo) bool { return os.SameFile(s, fi) }) {
			return
		}
		seen = append(seen, fi)
		out = append(out, Found{Client: c, Path: path, Project: project})
	}
	for _, c := range clients {
		for _, path := range c.paths(p) {
			add(c, path, false)
		}
	}
	if dir == "" {
		return out
	}
	for _, c := range clients {
		if path := c.ProjectPath(dir); path != "" {
			add(c, path, true)
		}
	}
	return out
}
