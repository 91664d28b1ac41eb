package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults and limits. Defaults live here, in code, not in default.json.
const (
	// DefaultStartupTimeout bounds how long a server may take to start and
	// answer "initialize" when startupTimeoutMs is absent.
	DefaultStartupTimeout = 10 * time.Second
	// DefaultCallTimeout bounds one request to a server when callTimeoutMs
	// is absent.
	DefaultCallTimeout = 60 * time.Second
	// MaxTimeout is the largest startupTimeoutMs and callTimeoutMs accepted.
	MaxTimeout = 24 * time.Hour

	// MaxNameLen is the longest server name accepted, in bytes.
	MaxNameLen = 64
	// MaxPrefixLen is the longest prefix accepted, in bytes.
	MaxPrefixLen = 32

	// MaxFileSize is the largest configuration file Load and Parse accept.
	MaxFileSize = 4 << 20

	// HomeEnv names the environment variable that overrides the home
	// directory (see [Home]).
	HomeEnv = "SWITCHBOARD_HOME"
	// HomeDirName is the home directory's name under the user's home
	// directory when HomeEnv is not set.
	HomeDirName = ".switchboard"
	// FileName is the configuration file's name inside the home directory.
	FileName = "config.json"

	// DefaultSource is the [Config.Source] of the embedded default.
	DefaultSource = "embedded default"
)

// redactedValue replaces literal env and header values in [Server.Redacted].
// It holds no characters that encoding/json escapes, so MarshalJSON output
// reads naturally.
const redactedValue = "[redacted]"

// Transport is how Switchboard talks to a server.
type Transport string

// The transports. The "type" field also accepts aliases (see the package
// documentation); a loaded Server always holds one of these three.
const (
	// TransportStdio launches Command and speaks JSON-RPC over its stdin
	// and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP is MCP's Streamable HTTP transport (spec 2025-03-26 and
	// later) at URL.
	TransportHTTP Transport = "http"
	// TransportSSE is the deprecated HTTP+SSE transport (spec 2024-11-05)
	// at URL.
	TransportSSE Transport = "sse"
)

// Config is a loaded, validated configuration.
type Config struct {
	// Source is the file the configuration was read from, or DefaultSource.
	Source string
	// Project is the project file whose servers were added (see
	// [Config.WithProject]), or "".
	Project string
	// Servers are sorted by Name (byte order), so iterating over them is
	// deterministic. Names are unique (ignoring case).
	Servers []*Server

	// Security limits what servers may send; Policy authorizes calls.
	// Parse fills every field; a zero field means its default.
	Security Security
	Policy   Policy
	// Context says what the model is shown of the aggregate (the
	// "context" object); its zero value is the default.
	Context Context
	// Store says where state is kept (the "store" object); its zero
	// value is SQLite in Switchboard's home.
	Store Store
	// Gateway holds the settings of serve's HTTP endpoint (the "gateway"
	// object; see gateway.go); its zero value is the default.
	Gateway Gateway
	// Clients are the gateway's named callers ("clients") and Profiles
	// the named subsets of the aggregate it serves ("profiles"), each in
	// file order; see clients.go.
	Clients  []*Client
	Profiles []*Profile

	// serversKey is the top-level key the servers came from ("mcpServers"
	// or "servers"); Validate uses it to build paths. Empty means
	// "mcpServers".
	serversKey string
}

// Server is one server's resolved configuration: aliases mapped, defaults
// applied and ${VAR} references expanded.
//
// Values resolved from the environment (Command, Args, Env, Cwd, URL,
// Headers) may be secrets. String, GoString, LogValue and MarshalJSON never
// print them; use [Server.Redacted] to display a server.
//
// Servers are normally made by [Parse], [Load] or [Default]. A Server built by
// hand has no "absent" fields: set every field, as Parse would (Enabled true,
// Prefix normally the name, the timeouts normally DefaultStartupTimeout and
// DefaultCallTimeout); [Config.Validate] rejects zero timeouts.
type Server struct {
	// Name is the key in "mcpServers" (or "servers").
	Name string
	// Transport is stdio, http or sse.
	Transport Transport

	// Command, Args, Env and Cwd launch a stdio server; they are empty (nil)
	// for http and sse. Cwd "" means Switchboard's working directory; a
	// relative Cwd is interpreted by the launcher, relative to it.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// Runtime ("runtime") maps runtimes the server needs (see [Runtimes])
	// to a version requirement: {"node": ">=20"}. The launcher checks them
	// before it starts the server, and fails with what to install instead
	// of a spawn error. nil means none beyond what the command implies (npx
	// needs node on the PATH). stdio only.
	Runtime map[string]string

	// URL and Headers reach an http or sse server; they are empty (nil) for
	// stdio. Headers includes "Authorization: Bearer ..." when
	// BearerTokenEnvVar is set.
	URL     string
	Headers map[string]string

	// Enabled is false when the configuration says "enabled": false or
	// "disabled": true. Disabled servers are kept so that tools can list
	// them.
	Enabled bool

	// Project is the project file the server comes from (absolute; see
	// [LoadProject]), or "" for the user configuration.
	Project string

	// Unusable, when not nil, is why the server cannot be started although
	// its configuration is valid: an environment variable it references is
	// not set, or it comes from a project file not trusted yet. Loading
	// goes on with the other servers. An unusable server's
	// Command, Args, Env, Cwd, URL and Headers are empty (Redacted shows
	// them as written); it must never be launched.
	Unusable *UnusableError

	// EnabledTools and DisabledTools are path.Match globs over the server's
	// tool names (as the server reports them, before prefixing). nil
	// EnabledTools means every tool; an empty, non-nil EnabledTools (the
	// configuration said []) means none. A tool is exposed if it matches
	// EnabledTools (when non-nil) and no DisabledTools glob.
	EnabledTools  []string
	DisabledTools []string

	// StartupTimeout and CallTimeout come from startupTimeoutMs and
	// callTimeoutMs, in (0, MaxTimeout].
	StartupTimeout time.Duration
	CallTimeout    time.Duration

	// BearerTokenEnvVar names the environment variable whose value became
	// the Authorization header; empty if not configured.
	BearerTokenEnvVar string

	// ProtocolVersion ("protocolVersion") pins the MCP protocol version
	// spoken to the server; "" lets Switchboard choose. It is a known
	// version: the 2026-07-28 one (the modern era; stdio and http only) or
	// one of the legacy ones, 2024-11-05 to 2025-11-25.
	ProtocolVersion string

	// Prefix namespaces this server's tools in model-facing names. It is the
	// server name when "prefix" is absent, and "" (pass-through: tool names
	// are not prefixed) when the configuration says "prefix": "". A name
	// that is not a valid prefix ("gh:sub") gives a derived one ("gh_sub",
	// with '_' and eight hex digits of a hash of the name appended when
	// another server has that prefix).
	// A non-empty prefix is 1 to MaxPrefixLen bytes of A-Z a-z 0-9 _ -.
	Prefix string

	// Trust is the server's trust level ("trust"; TrustUntrusted when
	// absent). Sampling, Elicitation, Roots and Images are resolved from it
	// and the server's own overrides (see TrustDefaults): whether the
	// server's sampling, elicitation and roots requests reach the client,
	// and whether its images do. Strict holds back tools whose metadata
	// matches an injection pattern (untrusted and sandboxed servers only).
	Trust                                Trust
	Sampling, Elicitation, Roots, Images bool
	Strict                               bool

	// Sandbox ("sandbox") confines a stdio server; its Mode is set for
	// every stdio server of a loaded configuration (see [Sandbox]).
	Sandbox Sandbox

	// ExpectedTools ("expectedTools") are globs over the tools the
	// operator expects the server to offer; nil means no attestation. A
	// tool outside them is reported, and withheld unless the server is
	// trusted.
	ExpectedTools []string

	// DeferTools ("deferTools"), when not nil, overrides the global
	// context.deferTools for this server's tools.
	DeferTools *bool

	// Lifecycle holds start-up, supervision and drift settings.
	Lifecycle Lifecycle

	// AllowEnv names the loader variables (see LoaderVar) this server's
	// env may set.
	AllowEnv []string

	// OAuth ("oauth") says how to log in to a Streamable HTTP server that
	// asks for OAuth 2.1; nil means the defaults (see [OAuth]).
	OAuth *OAuth

	// SecretRefs are the names of the environment variables this server
	// references (through ${VAR} or bearerTokenEnvVar) and of its
	// credentials ("cred:NAME", through ${cred:NAME}), sorted and unique,
	// never their values. A change in their values changes the server.
	SecretRefs []string

	// raw holds the fields as written, with ${VAR} references unexpanded,
	// for Redacted. nil for a Server built by hand.
	raw *rawFields
}

// rawFields are a server's expandable fields as written in the file.
type rawFields struct {
	command string
	args    []string
	env     map[string]string
	cwd     string
	url     string
	headers map[string]string // excludes the Authorization header added by bearerTokenEnvVar
}

// Server returns the server named name, or nil.
func (c *Config) Server(name string) *Server {
	if c == nil {
		return nil
	}
	for _, s := range c.Servers {
		if s != nil && s.Name == name {
			return s
		}
	}
	return nil
}

// Names returns the server names in Servers order (sorted for a loaded
// configuration).
func (c *Config) Names() []string {
	if c == nil {
		return nil
	}
	names := make([]string, 0, len(c.Servers))
	for _, s := range c.Servers {
		if s != nil {
			names = append(names, s.Name)
		}
	}
	return names
}

// Redacted returns a copy of c whose servers are [Server.Redacted].
func (c *Config) Redacted() *Config {
	if c == nil {
		return nil
	}
	r := &Config{Source: c.Source, Project: c.Project, serversKey: c.serversKey}
	for _, s := range c.Servers {
		r.Servers = append(r.Servers, s.Redacted())
	}
	return r
}

// Redacted returns a copy of s for display: Command, Args, Cwd, URL and the
// header and env values are shown as written in the configuration, with
// ${VAR} references unexpanded, and env and header values that reference no
// variable (which may be secrets pasted inline) are replaced by
// "[redacted]", as are the literal secrets in Args (SecretArg) and in the
// URL's user information and secret-named query parameters. Headers leaves out the Authorization header derived from
// BearerTokenEnvVar. The result is for display only: never launch it.
//
// The view is of the configuration as loaded: later changes to a loaded
// Server's Command, Args, Env, Cwd, URL or Headers do not show in it. For a
// Server built by hand (not by Parse) the values are taken as written, with
// any "${" escaped as "$${", and env and header values are redacted.
func (s *Server) Redacted() *Server {
	if s == nil {
		return nil
	}
	r := *s
	raw := s.raw
	if raw == nil {
		raw = &rawFields{
			command: escape(s.Command),
			cwd:     escape(s.Cwd),
			url:     escape(s.URL),
			env:     escapeValues(s.Env),
			headers: escapeValues(s.Headers),
		}
		if s.Args != nil {
			raw.args = make([]string, len(s.Args))
			for i, a := range s.Args {
				raw.args[i] = escape(a)
			}
		}
		if s.BearerTokenEnvVar != "" {
			for k := range raw.headers {
				if strings.EqualFold(k, "Authorization") {
					delete(raw.headers, k)
				}
			}
		}
	}
	r.Command, r.Cwd, r.URL = raw.command, raw.cwd, redactURL(raw.url)
	r.Args = slices.Clone(raw.args)
	for i := range r.Args {
		if _, before, _, after, ok := SecretArg(raw.args, i); ok {
			r.Args[i] = before + redactedValue + after
		}
	}
	r.Env = redactValues(raw.env)
	r.Headers = redactValues(raw.headers)
	r.EnabledTools = slices.Clone(s.EnabledTools)
	r.DisabledTools = slices.Clone(s.DisabledTools)
	r.SecretRefs = slices.Clone(s.SecretRefs)
	r.Runtime = maps.Clone(s.Runtime)
	r.OAuth = cloneOAuth(s.OAuth, true)
	r.raw = &rawFields{
		command: r.Command, args: slices.Clone(r.Args), env: maps.Clone(r.Env),
		cwd: r.Cwd, url: r.URL, headers: maps.Clone(r.Headers),
	}
	return &r
}

// escapeValues copies m, escaping every value.
func escapeValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = escape(v)
	}
	return out
}

// redactValues copies m, replacing every non-empty value that references no
// variable by redactedValue.
func redactValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" && !hasRef(v) {
			v = redactedValue
		}
		out[k] = v
	}
	return out
}

// String describes the server without any configured value, e.g.
// `server "github": http, enabled, prefix "github"`.
func (s Server) String() string {
	state := "enabled"
	switch {
	case !s.Enabled:
		state = "disabled"
	case s.Unusable != nil:
		state = "unusable"
	}
	return fmt.Sprintf("server %q: %s, %s, prefix %q", s.Name, s.Transport, state, s.Prefix)
}

// GoString is like String, so that %#v cannot print secrets either.
func (s Server) GoString() string {
	return fmt.Sprintf("config.Server{Name: %q, Transport: %q, Enabled: %t, Prefix: %q /* values redacted */}",
		s.Name, s.Transport, s.Enabled, s.Prefix)
}

// LogValue logs the server's name, transport, state and prefix, never its
// values.
func (s Server) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", s.Name),
		slog.String("transport", string(s.Transport)),
		slog.Bool("enabled", s.Enabled),
		slog.String("prefix", s.Prefix),
	)
}

// String describes the configuration by source and server names, e.g.
// `config "/home/u/.switchboard/config.json": 2 servers: "a", "b"`.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config %q: %d server", c.Source, len(c.Servers))
	if len(c.Servers) != 1 {
		b.WriteByte('s')
	}
	for i, s := range c.Servers {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		if s == nil {
			b.WriteString("<nil>")
			continue
		}
		b.WriteString(strconv.Quote(s.Name))
	}
	return b.String()
}

// GoString is like String, so that %#v cannot print secrets either.
func (c Config) GoString() string {
	return fmt.Sprintf("config.Config{Source: %q, Servers: %q /* values redacted */}", c.Source, c.Names())
}

// LogValue logs the source and the server names.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("source", c.Source),
		slog.Any("servers", c.Names()),
	)
}

// serverJSON is the canonical JSON form of a server, as MarshalJSON writes it.
type serverJSON struct {
	Type              Transport         `json:"type"`
	Command           string            `json:"command,omitempty"`
	Args              []string          `json:"args,omitempty"`
	Env               map[string]string `json:"env,omitempty"`
	Cwd               string            `json:"cwd,omitempty"`
	Runtime           map[string]string `json:"runtime,omitempty"`
	URL               string            `json:"url,omitempty"`
	Headers           map[string]string `json:"headers,omitempty"`
	BearerTokenEnvVar string            `json:"bearerTokenEnvVar,omitempty"`
	ProtocolVersion   string            `json:"protocolVersion,omitempty"`
	Enabled           bool              `json:"enabled"`
	EnabledTools      *[]string         `json:"enabledTools,omitempty"`
	DisabledTools     *[]string         `json:"disabledTools,omitempty"`
	Prefix            string            `json:"prefix"`
	StartupTimeoutMs  int64             `json:"startupTimeoutMs"`
	CallTimeoutMs     int64             `json:"callTimeoutMs"`
	Trust             Trust             `json:"trust"`
	Sampling          bool              `json:"sampling"`
	Elicitation       bool              `json:"elicitation"`
	Roots             bool              `json:"roots"`
	Images            bool              `json:"images"`
	Strict            bool              `json:"strict"`
	ExpectedTools     *[]string         `json:"expectedTools,omitempty"`
	AllowEnv          []string          `json:"allowEnv,omitempty"`
	Eager             bool              `json:"eager"`
	IdleTimeoutMs     int64             `json:"idleTimeoutMs,omitempty"`
	StartupAttempts   int               `json:"startupAttempts"`
	RetryMs           int64             `json:"retryMs"`
	Approval          string            `json:"approval"`
	OnDrift           string            `json:"onDrift"`
	LockToolList      bool              `json:"lockToolList"`
	Sandbox           any               `json:"sandbox,omitempty"`
}

// MarshalJSON writes the [Server.Redacted] view in the canonical "mcpServers"
// server shape, with every default made explicit. It never writes resolved
// values, so a Server cannot leak through encoding/json or a JSON log
// handler. The output of a loaded server parses back to the same server
// (literal env and header values become "[redacted]").
func (s Server) MarshalJSON() ([]byte, error) {
	r := s.Redacted()
	j := serverJSON{
		Type:              r.Transport,
		Command:           r.Command,
		Args:              r.Args,
		Env:               r.Env,
		Cwd:               r.Cwd,
		Runtime:           r.Runtime,
		URL:               r.URL,
		Headers:           r.Headers,
		BearerTokenEnvVar: r.BearerTokenEnvVar,
		ProtocolVersion:   r.ProtocolVersion,
		Enabled:           r.Enabled,
		Prefix:            r.Prefix,
		StartupTimeoutMs:  millis(r.StartupTimeout),
		CallTimeoutMs:     millis(r.CallTimeout),
		Trust:             r.Trust,
		Sampling:          r.Sampling,
		Elicitation:       r.Elicitation,
		Roots:             r.Roots,
		Images:            r.Images,
		Strict:            r.Strict,
		AllowEnv:          r.AllowEnv,
		Eager:             r.Lifecycle.Eager,
		IdleTimeoutMs:     millis(r.Lifecycle.IdleTimeout),
		StartupAttempts:   r.Lifecycle.StartupAttempts,
		RetryMs:           millis(r.Lifecycle.RetryAfter),
		Approval:          r.Lifecycle.Approval,
		OnDrift:           r.Lifecycle.OnDrift,
		LockToolList:      r.Lifecycle.LockToolList,
		Sandbox:           r.Sandbox.json(),
	}
	if r.ExpectedTools != nil {
		j.ExpectedTools = &r.ExpectedTools
	}
	if r.EnabledTools != nil {
		j.EnabledTools = &r.EnabledTools
	}
	if r.DisabledTools != nil {
		j.DisabledTools = &r.DisabledTools
	}
	return json.Marshal(j)
}

// MarshalJSON writes {"mcpServers": {...}} with each server as
// [Server.MarshalJSON] writes it: a redacted configuration file that Parse
// accepts.
func (c Config) MarshalJSON() ([]byte, error) {
	servers := make(map[string]*Server, len(c.Servers))
	for _, s := range c.Servers {
		if s != nil {
			servers[s.Name] = s
		}
	}
	return json.Marshal(struct {
		MCPServers map[string]*Server `json:"mcpServers"`
	}{servers})
}

// millis converts d to whole milliseconds, rounding up so that a positive
// duration stays positive.
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
