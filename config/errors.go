package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// ErrMissingVar is wrapped by every [UnusableError] of CodeMissingEnv: a referenced
// environment variable is not set (a ${VAR} without a default, or a
// bearerTokenEnvVar). Test for it with errors.Is.
var ErrMissingVar = errors.New("environment variable not set")

// Error is one problem found while loading or validating a configuration.
//
// Its message never contains the value of an environment variable or any other
// resolved value; it may name the variable.
type Error struct {
	// File is the configuration file ([Config.Source]); empty if unknown.
	File string
	// Path is the JSON path of the offending value, such as
	// `$.mcpServers.github.args[2]`; empty for errors about the file as a
	// whole (unreadable, not JSON). Object keys that are not plain
	// identifiers are written in brackets: `$.mcpServers["gh:sub"].url`.
	Path string
	// Server is the name of the server the problem concerns, if any.
	Server string
	// Msg describes the problem.
	Msg string
	// Err is the underlying cause, if any: [ErrMissingVar], or the error
	// returned by the operating system when the file could not be read.
	Err error
}

// Error formats the problem as "file: path: msg", leaving out empty parts.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// joinErrors turns a list of problems into the error Parse returns: nil, the
// single *Error, or an errors.Join of them (in document order).
func joinErrors(errs []*Error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	list := make([]error, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return errors.Join(list...)
}

// jsonPath is one step of a JSON path, linked to its parent. A nil *jsonPath is
// the root, "$". Paths are built cheaply while walking and only rendered when a
// problem is reported.
type jsonPath struct {
	parent *jsonPath
	key    string
	index  int
	isIdx  bool
}

// k returns the path of member key of the object at p.
func (p *jsonPath) k(key string) *jsonPath { return &jsonPath{parent: p, key: key} }

// i returns the path of element i of the array at p.
func (p *jsonPath) i(i int) *jsonPath { return &jsonPath{parent: p, index: i, isIdx: true} }

// String renders the path, e.g. `$.mcpServers.x.args[2]`.
func (p *jsonPath) String() string {
	var steps []*jsonPath
	for q := p; q != nil; q = q.parent {
		steps = append(steps, q)
	}
	var b strings.Builder
	b.WriteByte('$')
	for j := len(steps) - 1; j >= 0; j-- {
		s := steps[j]
		if s.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		b.WriteString(pathKey(s.key))
	}
	return b.String()
}

// pathKey renders one object key as a path step: ".key" when the key is a
// plain identifier (letters, digits, '_', '$' and '-', not starting with a
// digit or '-'), otherwise `["key"]` quoted Go-style so that control
// characters and quotes are escaped and a path is always one printable line.
func pathKey(k string) string {
	plain := k != ""
	for i := 0; i < len(k) && plain; i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$':
		case (c >= '0' && c <= '9') || c == '-':
			plain = i > 0
		default:
			plain = false
		}
	}
	if plain {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

// CodeMissingEnv is the [UnusableError] code of a server that references an
// environment variable which is not set.
const CodeMissingEnv = "missing_env"

// UnusableError says why a server that parsed cannot be started: that
// environment variables it references (through ${VAR} or
// bearerTokenEnvVar) are not set, or that it comes from a project file
// whose content the user has not approved (CodeProjectUntrusted). The other servers of the configuration
// are unaffected. Its message names each variable and the fields that
// reference it, never a value:
//
//	server "gh": ${GITHUB_TOKEN} is not set (env.GITHUB_TOKEN)
//
// It wraps [ErrMissingVar].
type UnusableError struct {
	// Code is a stable identifier of the reason: CodeMissingEnv or
	// CodeProjectUntrusted.
	Code string
	// File is the configuration file ([Config.Source]); empty if unknown.
	File string
	// Server is the server's name.
	Server string
	// Missing are the variables that are not set, in the order the
	// configuration first references them, each with the fields that
	// reference it.
	Missing []MissingVar
}

// MissingVar is one environment variable a server references that is not
// set.
type MissingVar struct {
	// Name is the variable's name.
	Name string
	// Fields are the JSON paths, relative to the server, of the values
	// that reference it, in document order: "env.GITHUB_TOKEN",
	// "args[1]", "bearerTokenEnvVar".
	Fields []string
}

// Error formats the reason, e.g. `server "gh": ${GITHUB_TOKEN} is not set
// (env.GITHUB_TOKEN)`; several variables are separated by "; ".
func (e *UnusableError) Error() string {
	if e.Code == CodeProjectUntrusted {
		return untrustedMsg(e)
	}
	var b strings.Builder
	b.WriteString("server ")
	b.WriteString(strconv.Quote(e.Server))
	b.WriteString(": ")
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString("; ")
		}
		if cred, ok := strings.CutPrefix(m.Name, credPrefix); ok {
			b.WriteString("credential " + strconv.Quote(cred) + " is not stored (" + strings.Join(m.Fields, ", ") + ")")
		} else {
			b.WriteString("${" + m.Name + "} is not set (" + strings.Join(m.Fields, ", ") + ")")
		}
		if vscodeVars[m.Name] {
			b.WriteString(": it is a VS Code variable, and only environment variables are expanded")
		}
	}
	return b.String()
}

// Unwrap returns [ErrMissingVar], or [ErrProjectUntrusted] for
// CodeProjectUntrusted.
func (e *UnusableError) Unwrap() error {
	if e.Code == CodeProjectUntrusted {
		return ErrProjectUntrusted
	}
	return ErrMissingVar
}

// missing records that field, a path relative to the server, references
// the unset variable name.
func (e *UnusableError) missing(name, f string) {
	for i := range e.Missing {
		if e.Missing[i].Name == name {
			if !slices.Contains(e.Missing[i].Fields, f) {
				e.Missing[i].Fields = append(e.Missing[i].Fields, f)
			}
			return
		}
	}
	e.Missing = append(e.Missing, MissingVar{Name: name, Fields: []string{f}})
}
