package mcpregistry

// The server.json format (schema 2025-10-17 and later, camelCase
// members) as the registry's v0.1 API serves it. Members this package
// does not use are ignored, so that a newer registry stays readable.

// Server is one server.json: one version of one server.
type Server struct {
	// Name is the server's reverse-DNS name, "io.github.owner/name".
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Remote    `json:"remotes,omitempty"`
}

// Repository is where a server's source lives.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Registry types of a [Package].
const (
	TypeNPM   = "npm"
	TypePyPI  = "pypi"
	TypeOCI   = "oci"
	TypeNuGet = "nuget"
	TypeMCPB  = "mcpb"
)

// Transport types of a [Package] or a [Remote].
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// Package is a way to run the server locally from a package registry.
type Package struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl,omitempty"`
	// Identifier is the package's name (an npm or PyPI name, an OCI
	// image reference, an .mcpb URL).
	Identifier string `json:"identifier"`
	// Version is the package's exact version; an OCI package may carry
	// its tag or digest in Identifier instead.
	Version string `json:"version,omitempty"`
	// RuntimeHint names the command that runs the package (npx, uvx,
	// docker...).
	RuntimeHint          string     `json:"runtimeHint,omitempty"`
	Transport            *Transport `json:"transport,omitempty"`
	RuntimeArguments     []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument `json:"packageArguments,omitempty"`
	EnvironmentVariables []Input    `json:"environmentVariables,omitempty"`
	FileSHA256           string     `json:"fileSha256,omitempty"`
}

// Transport is how a package speaks MCP: stdio, or HTTP at a URL.
type Transport struct {
	Type    string  `json:"type"`
	URL     string  `json:"url,omitempty"`
	Headers []Input `json:"headers,omitempty"`
}

// Remote is the server run by someone else, at a URL.
type Remote struct {
	Type    string  `json:"type"`
	URL     string  `json:"url"`
	Headers []Input `json:"headers,omitempty"`
	// Variables fill the {name} placeholders of URL.
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value a client supplies: an environment variable or a
// header (Name set), an argument ([Argument]), or a variable of a
// template.
type Input struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	IsRequired  bool   `json:"isRequired,omitempty"`
	IsSecret    bool   `json:"isSecret,omitempty"`
	// Format is string (the default), number, boolean or filepath.
	Format string `json:"format,omitempty"`
	// Value is the value to use: fixed, or a template whose {name}
	// placeholders Variables fill. Unset, the client asks.
	Value   string   `json:"value,omitempty"`
	Default string   `json:"default,omitempty"`
	Choices []string `json:"choices,omitempty"`
	// Placeholder is a hint shown where the value is asked for.
	Placeholder string           `json:"placeholder,omitempty"`
	Variables   map[string]Input `json:"variables,omitempty"`
}

// Argument kinds.
const (
	ArgPositional = "positional"
	ArgNamed      = "named"
)

// Argument is a word or two of a command line: a positional value, or a
// named flag followed by its value.
type Argument struct {
	Input
	Type string `json:"type"`
	// ValueHint names a positional argument's value ("target_dir").
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// Entry is a server as the registry serves it: its server.json and the
// registry's own metadata.
type Entry struct {
	Server Server `json:"server"`
	Meta   Meta   `json:"_meta,omitzero"`
}

// Meta is the registry's metadata of an [Entry].
type Meta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Official is what the official registry says of a version.
type Official struct {
	// Status is active, deprecated or deleted.
	Status      string `json:"status,omitempty"`
	PublishedAt string `json:"publishedAt,omitempty"`
	UpdatedAt   string `json:"updatedAt,omitempty"`
	IsLatest    bool   `json:"isLatest,omitempty"`
}

// Page is one page of a listing.
type Page struct {
	Servers []Entry `json:"servers"`
	// NextCursor asks for the next page; "" on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// Transports lists the ways s can be reached: a package's transport
// ("stdio" by default), then each remote's, without repeats.
func (s *Server) Transports() []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, p := range s.Packages {
		if p.Transport == nil || p.Transport.Type == "" {
			add(TransportStdio)
		} else {
			add(p.Transport.Type)
		}
	}
	for _, r := range s.Remotes {
		add(r.Type)
	}
	return out
}
