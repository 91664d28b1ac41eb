package clientconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// ordered is a JSON object that keeps its keys in the order given.
type ordered []kv

type kv struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func sortedMap(m map[string]string, conv func(string) string) ordered {
	o := make(ordered, 0, len(m))
	for _, k := range sortedKeys(m) {
		o = append(o, kv{k, conv(m[k])})
	}
	return o
}

var refRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// clientRefs rewrites ${VAR} into the client's syntax.
func (c *Client) clientRefs(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if c.noRefs {
		return "", fmt.Errorf("%s does not expand variables, and %q refers to one", c.Name, s)
	}
	if c.envPrefix == "" {
		return s, nil
	}
	var err error
	out := refRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := refRE.FindStringSubmatch(m)
		if sub[2] != "" {
			err = fmt.Errorf("%s has no default values in references: %q", c.Name, m)
		}
		return "${" + c.envPrefix + sub[1] + "}"
	})
	return out, err
}

// renderValue is e as the client writes one server, for a JSON client.
func (c *Client) renderValue(e Entry) (ordered, error) {
	var firstErr error
	ref := func(s string) string {
		out, err := c.clientRefs(s)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return out
	}
	var o ordered
	switch e.Transport {
	case Stdio, "":
		if e.Command == "" {
			return nil, fmt.Errorf("server %q: a stdio entry needs a command", e.Name)
		}
		if c.typed {
			o = append(o, kv{"type", "stdio"})
		}
		o = append(o, kv{"command", ref(e.Command)})
		if len(e.Args) > 0 {
			args := make([]string, len(e.Args))
			for i, a := range e.Args {
				args[i] = ref(a)
			}
			o = append(o, kv{"args", args})
		}
		if len(e.Env) > 0 {
			o = append(o, kv{"env", sortedMap(e.Env, ref)})
		}
		if e.Cwd != "" {
			o = append(o, kv{"cwd", ref(e.Cwd)})
		}
	case HTTP, SSE:
		if c.stdioOnly {
			return nil, fmt.Errorf("%s's configuration file holds stdio servers only; connect it with a stdio entry (switchboard serve)", c.Name)
		}
		if e.URL == "" {
			return nil, fmt.Errorf("server %q: an %s entry needs a url", e.Name, e.Transport)
		}
		if c.typed {
			o = append(o, kv{"type", string(e.Transport)})
		}
		key := c.urlKey
		if e.Transport == SSE && c.ID == "gemini" {
			key = "url"
		}
		o = append(o, kv{key, ref(e.URL)})
		h := map[string]string{}
		for k, v := range e.Headers {
			h[k] = v
		}
		if e.BearerTokenEnvVar != "" {
			h["Authorization"] = "Bearer ${" + e.BearerTokenEnvVar + "}"
		}
		if len(h) > 0 {
			o = append(o, kv{"headers", sortedMap(h, ref)})
		}
	default:
		return nil, fmt.Errorf("server %q: unknown transport %q", e.Name, e.Transport)
	}
	if e.Disabled {
		o = append(o, kv{"disabled", true})
	}
	return o, firstErr
}

// Render returns the entry as the client writes it, to show it: for a JSON
// client an object holding the one member `"name": {...}`, indented by two
// spaces; for Codex its TOML tables.
func Render(c *Client, e Entry) ([]byte, error) {
	if c.Format == TOML {
		return renderTOML(e)
	}
	v, err := c.renderValue(e)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(ordered{{e.Name, v}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// codexServer is one [mcp_servers.NAME] table as Codex reads it.
type codexServer struct {
	Command           string            `toml:"command,omitempty"`
	Args              []string          `toml:"args,omitempty"`
	Cwd               string            `toml:"cwd,omitempty"`
	URL               string            `toml:"url,omitempty"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var,omitempty"`
	EnvVars           []string          `toml:"env_vars,omitempty"`
	Enabled           *bool             `toml:"enabled,omitempty"`
	Env               map[string]string `toml:"env,omitempty"`
	HTTPHeaders       map[string]string `toml:"http_headers,omitempty"`
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers,omitempty"`
}

var wholeRefRE = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
var bearerRefRE = regexp.MustCompile(`^(?i:bearer) \$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

func codexValue(e Entry) (codexServer, error) {
	var s codexServer
	noRef := func(field, v string) error {
		if strings.Contains(v, "${") {
			return fmt.Errorf("server %q: Codex does not expand variables in %s: %q", e.Name, field, v)
		}
		return nil
	}
	switch e.Transport {
	case Stdio, "":
		if e.Command == "" {
			return s, fmt.Errorf("server %q: a stdio entry needs a command", e.Name)
		}
		s.Command, s.Args, s.Cwd = e.Command, e.Args, e.Cwd
		if err := noRef("command", e.Command); err != nil {
			return s, err
		}
		for _, a := range e.Args {
			if err := noRef("args", a); err != nil {
				return s, err
			}
		}
		for _, k := range sortedKeys(e.Env) {
			v := e.Env[k]
			if m := wholeRefRE.FindStringSubmatch(v); m != nil && m[1] == k {
				s.EnvVars = append(s.EnvVars, k)
				continue
			}
			if err := noRef("env."+k, v); err != nil {
				return s, err
			}
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env[k] = v
		}
	case HTTP:
		if e.URL == "" {
			return s, fmt.Errorf("server %q: an http entry needs a url", e.Name)
		}
		if err := noRef("url", e.URL); err != nil {
			return s, err
		}
		s.URL, s.BearerTokenEnvVar = e.URL, e.BearerTokenEnvVar
		for _, k := range sortedKeys(e.Headers) {
			v := e.Headers[k]
			if m := bearerRefRE.FindStringSubmatch(v); m != nil && strings.EqualFold(k, "authorization") && s.BearerTokenEnvVar == "" {
				s.BearerTokenEnvVar = m[1]
				continue
			}
			if m := wholeRefRE.FindStringSubmatch(v); m != nil {
				if s.EnvHTTPHeaders == nil {
					s.EnvHTTPHeaders = map[string]string{}
				}
				s.EnvHTTPHeaders[k] = m[1]
				continue
			}
			if err := noRef("headers."+k, v); err != nil {
				return s, err
			}
			if s.HTTPHeaders == nil {
				s.HTTPHeaders = map[string]string{}
			}
			s.HTTPHeaders[k] = v
		}
	default:
		return s, fmt.Errorf("server %q: Codex reaches servers over stdio or Streamable HTTP, not %s", e.Name, e.Transport)
	}
	if e.Disabled {
		f := false
		s.Enabled = &f
	}
	return s, nil
}

func renderTOML(e Entry) ([]byte, error) {
	s, err := codexValue(e)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(map[string]map[string]codexServer{"mcp_servers": {e.Name: s}}); err != nil {
		return nil, err
	}
	// The encoder writes the empty parent table first; a file needs only
	// the server's own tables.
	out := b.String()
	out = strings.TrimPrefix(out, "[mcp_servers]\n")
	return []byte(strings.TrimLeft(out, "\n")), nil
}
