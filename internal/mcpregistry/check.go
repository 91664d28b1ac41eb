package mcpregistry

import (
	"errors"
	"fmt"
	"regexp"
)

// Limits of a server.json this package accepts.
const (
	maxItems = 64   // packages, remotes, arguments, variables... of one list
	maxText  = 8192 // a value that goes into a configuration
)

var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	varName    = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// Check reports what makes s unusable: a name or version missing or
// malformed, lists too long, or a value that would go into a
// configuration (an identifier, an argument, a name) holding a control
// character or too long. What is not used (a description) is not checked
// here; whoever prints it escapes it.
func (s *Server) Check() error {
	if err := checkName(s.Name); err != nil {
		return err
	}
	if s.Version == "" || !printable(s.Version) || len(s.Version) > 200 {
		return fmt.Errorf("server %q: version %q is missing or malformed", s.Name, s.Version)
	}
	if len(s.Packages) > maxItems || len(s.Remotes) > maxItems {
		return fmt.Errorf("server %q: more than %d packages or remotes", s.Name, maxItems)
	}
	for i, p := range s.Packages {
		if err := p.check(); err != nil {
			return fmt.Errorf("server %q: packages[%d]: %w", s.Name, i, err)
		}
	}
	for i, r := range s.Remotes {
		if err := r.check(); err != nil {
			return fmt.Errorf("server %q: remotes[%d]: %w", s.Name, i, err)
		}
	}
	return nil
}

func (p *Package) check() error {
	for _, t := range []struct{ name, v string }{{"registryType", p.RegistryType}, {"identifier", p.Identifier},
		{"version", p.Version}, {"runtimeHint", p.RuntimeHint}, {"registryBaseUrl", p.RegistryBaseURL}, {"fileSha256", p.FileSHA256}} {
		if err := checkText(t.name, t.v); err != nil {
			return err
		}
	}
	if p.Identifier == "" {
		return errors.New("identifier is missing")
	}
	if len(p.RuntimeArguments) > maxItems || len(p.PackageArguments) > maxItems || len(p.EnvironmentVariables) > maxItems {
		return fmt.Errorf("more than %d arguments or environment variables", maxItems)
	}
	for i, a := range p.RuntimeArguments {
		if err := a.check(); err != nil {
			return fmt.Errorf("runtimeArguments[%d]: %w", i, err)
		}
	}
	for i, a := range p.PackageArguments {
		if err := a.check(); err != nil {
			return fmt.Errorf("packageArguments[%d]: %w", i, err)
		}
	}
	for i, in := range p.EnvironmentVariables {
		if !envName.MatchString(in.Name) {
			return fmt.Errorf("environmentVariables[%d]: name %q is not an environment variable's", i, in.Name)
		}
		if err := in.check(); err != nil {
			return fmt.Errorf("environmentVariables[%d]: %w", i, err)
		}
	}
	if p.Transport != nil {
		if err := checkText("transport.type", p.Transport.Type); err != nil {
			return err
		}
		if err := checkText("transport.url", p.Transport.URL); err != nil {
			return err
		}
	}
	return nil
}

func (r *Remote) check() error {
	if err := checkText("type", r.Type); err != nil {
		return err
	}
	if err := checkText("url", r.URL); err != nil {
		return err
	}
	if r.URL == "" {
		return errors.New("url is missing")
	}
	if len(r.Headers) > maxItems || len(r.Variables) > maxItems {
		return fmt.Errorf("more than %d headers or variables", maxItems)
	}
	for i, h := range r.Headers {
		if !headerName.MatchString(h.Name) {
			return fmt.Errorf("headers[%d]: name %q is not a header's", i, h.Name)
		}
		if err := h.check(); err != nil {
			return fmt.Errorf("headers[%d]: %w", i, err)
		}
	}
	for k, v := range r.Variables {
		if !varName.MatchString(k) {
			return fmt.Errorf("variables: name %q is malformed", k)
		}
		if err := v.check(); err != nil {
			return fmt.Errorf("variables[%q]: %w", k, err)
		}
	}
	return nil
}

func (a *Argument) check() error {
	switch a.Type {
	case ArgPositional, ArgNamed:
	default:
		return fmt.Errorf("type %q: want positional or named", a.Type)
	}
	if a.Type == ArgNamed && (a.Name == "" || !printable(a.Name) || len(a.Name) > 200) {
		return fmt.Errorf("a named argument's name %q is missing or malformed", a.Name)
	}
	if err := checkText("valueHint", a.ValueHint); err != nil {
		return err
	}
	return a.Input.check()
}

func (in *Input) check() error {
	for _, t := range []struct{ name, v string }{{"name", in.Name}, {"value", in.Value}, {"default", in.Default}, {"format", in.Format}} {
		if err := checkText(t.name, t.v); err != nil {
			return err
		}
	}
	if len(in.Choices) > maxItems || len(in.Variables) > maxItems {
		return fmt.Errorf("more than %d choices or variables", maxItems)
	}
	for _, c := range in.Choices {
		if err := checkText("choices", c); err != nil {
			return err
		}
	}
	for k, v := range in.Variables {
		if !varName.MatchString(k) {
			return fmt.Errorf("variables: name %q is malformed", k)
		}
		if len(v.Variables) > 0 {
			return fmt.Errorf("variables[%q]: a variable has no variables of its own", k)
		}
		if err := v.check(); err != nil {
			return fmt.Errorf("variables[%q]: %w", k, err)
		}
	}
	return nil
}

func checkText(name, v string) error {
	if len(v) > maxText {
		return fmt.Errorf("%s is longer than %d bytes", name, maxText)
	}
	if !printable(v) {
		return fmt.Errorf("%s %q holds a control character", name, v)
	}
	return nil
}
