package config

import (
	"encoding/json"
	"fmt"
)

// Constructors for a configuration built in code, so that a program need
// not write JSON: each server and the configuration get every default a
// file would give them, and are checked as a file is. Their strings are
// taken literally: "${" in them is not a reference. Change a server's
// other fields (its Trust, CallTimeout, DisabledTools...) before New.

// Stdio returns a stdio server called name that runs command with args:
// what {"command": command, "args": args} says in a file.
func Stdio(name, command string, args ...string) (*Server, error) {
	lit := make([]string, len(args))
	for i, a := range args {
		lit[i] = escape(a)
	}
	return buildServer(name, map[string]any{"command": escape(command), "args": lit})
}

// HTTP returns a Streamable HTTP server called name at url: what
// {"url": url} says in a file.
func HTTP(name, url string) (*Server, error) {
	return buildServer(name, map[string]any{"url": escape(url)})
}

// buildServer parses a configuration holding one server, name, described
// by obj.
func buildServer(name string, obj map[string]any) (*Server, error) {
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: obj}})
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(doc, fmt.Sprintf("server %q", name), &LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		return nil, err
	}
	return cfg.Servers[0], nil
}

// New returns a configuration of servers (made by Stdio and HTTP, or
// taken from another configuration), with every other setting at its
// default, checked as Validate checks one: a name or a prefix given twice
// is an error.
func New(servers ...*Server) (*Config, error) {
	cfg, err := Parse([]byte(`{"mcpServers": {}}`), "", nil)
	if err != nil {
		return nil, err
	}
	cfg.Servers = append([]*Server(nil), servers...)
	for _, s := range cfg.Servers {
		if s == nil {
			return nil, fmt.Errorf("config.New: a nil server")
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}
