package mcpregistry

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Launch is a server.json translated into what a Switchboard server's
// configuration holds. Texts are literal: whoever writes them into a
// configuration escapes them, and keeps a Secret value as a credential.
type Launch struct {
	// Transport is "stdio", "http" (Streamable HTTP) or "sse".
	Transport string
	Command   string // stdio
	Args      []Value
	Env       []Var
	URL       string // http, sse
	Headers   []Var
	// What names what runs: "npm @scope/server@1.2.3", "oci
	// docker.io/org/image:1.0", or "remote https://...".
	What string
	// Omitted are the optional values no one gave, left out.
	Omitted []Question
}

// Value is a literal text; Secret when a secret went into it.
type Value struct {
	Text   string
	Secret bool
}

// Var is a named value: an environment variable or a header.
type Var struct {
	Name  string
	Value Value
}

// Kinds of a [Question].
const (
	KindEnv      = "env"
	KindHeader   = "header"
	KindArgument = "argument"
	KindVariable = "variable"
)

// Question is a value a server.json leaves to the person adding it.
type Question struct {
	// Key is what the person names the value by: the environment
	// variable's or the header's name, a positional argument's value
	// hint, a named argument's flag without its dashes, a variable's
	// name.
	Key         string
	Kind        string
	Description string
	Required    bool
	Secret      bool
	Default     string
	Choices     []string
	Format      string
	// Repeated: the argument may be given several values, each its own
	// word (or flag and word).
	Repeated bool
}

// Asker gives a question's values: one, several when the question is
// Repeated, or none (the default then applies; without one, a required
// value is a [*MissingError] and an optional one is left out). An error
// ends the translation.
type Asker func(Question) ([]string, error)

// MissingError is a required value that no one gave.
type MissingError struct{ Question Question }

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s %s is required and has no value", e.Question.Kind, e.Question.Key)
}

// Choice is which of a server's packages or remotes to run: Package or
// Remote, numbered from 1.
type Choice struct {
	Package int
	Remote  int
}

// ChooseOptions say how [Choose] picks.
type ChooseOptions struct {
	// Package picks that package (from 1); 0 lets Choose pick.
	Package int
	// Remote picks a remote (Streamable HTTP before SSE).
	Remote bool
	// Installed reports whether a command is on the PATH; nil counts
	// every command as installed.
	Installed func(command string) bool
}

// Choose picks how to run s: the package or remote o names, else the
// first package Switchboard can run whose runtime is installed, else a
// remote (Streamable HTTP first), else the first package it can run.
func Choose(s *Server, o ChooseOptions) (Choice, error) {
	if o.Package != 0 && o.Remote {
		return Choice{}, errors.New("a package or a remote, not both")
	}
	if o.Package != 0 {
		if o.Package < 1 || o.Package > len(s.Packages) {
			return Choice{}, fmt.Errorf("server %s has %d packages, no package %d", s.Name, len(s.Packages), o.Package)
		}
		if _, err := s.Packages[o.Package-1].command(); err != nil {
			return Choice{}, fmt.Errorf("package %d: %w", o.Package, err)
		}
		return Choice{Package: o.Package}, nil
	}
	remote := 0
	for _, want := range []string{TransportStreamableHTTP, TransportSSE} {
		for i, r := range s.Remotes {
			if r.Type == want && remote == 0 {
				remote = i + 1
			}
		}
	}
	if o.Remote {
		if remote == 0 {
			return Choice{}, fmt.Errorf("server %s has no remote Switchboard can reach", s.Name)
		}
		return Choice{Remote: remote}, nil
	}
	first := 0
	var why []string
	for i, p := range s.Packages {
		cmd, err := p.command()
		if err != nil {
			why = append(why, fmt.Sprintf("package %d: %v", i+1, err))
			continue
		}
		if o.Installed == nil || o.Installed(cmd) {
			return Choice{Package: i + 1}, nil
		}
		if first == 0 {
			first = i + 1
		}
	}
	if remote != 0 {
		return Choice{Remote: remote}, nil
	}
	if first != 0 {
		return Choice{Package: first}, nil
	}
	if len(s.Remotes) > 0 {
		why = append(why, "its remotes are neither streamable-http nor sse")
	}
	if len(why) == 0 {
		return Choice{}, fmt.Errorf("server %s has neither a package nor a remote", s.Name)
	}
	return Choice{}, fmt.Errorf("server %s has no package or remote Switchboard can run: %s", s.Name, strings.Join(why, "; "))
}

// command is the command that runs p: its runtime hint, or the registry
// type's usual runtime; an error for what Switchboard cannot run.
func (p *Package) command() (string, error) {
	if p.Transport != nil && p.Transport.Type != "" && p.Transport.Type != TransportStdio {
		return "", fmt.Errorf("a local %s server is not supported: only stdio packages are run", p.Transport.Type)
	}
	allowed := map[string][]string{
		TypeNPM:  {"npx", "bunx"},
		TypePyPI: {"uvx", "pipx"},
		TypeOCI:  {"docker", "podman"},
	}[p.RegistryType]
	if allowed == nil {
		switch p.RegistryType {
		case TypeNuGet, TypeMCPB:
			return "", fmt.Errorf("registry type %s is not supported: npm, pypi and oci packages are", p.RegistryType)
		}
		return "", fmt.Errorf("unknown registry type %q: npm, pypi and oci packages are supported", p.RegistryType)
	}
	if p.RuntimeHint == "" {
		return allowed[0], nil
	}
	if !slices.Contains(allowed, p.RuntimeHint) {
		return "", fmt.Errorf("runtime %q is not supported for a %s package: %s", p.RuntimeHint, p.RegistryType, strings.Join(allowed, " or "))
	}
	return p.RuntimeHint, nil
}

// Translate renders how to run s as c chooses, asking ask for the values
// s leaves open.
func Translate(s *Server, c Choice, ask Asker) (*Launch, error) {
	t := &translator{ask: ask}
	switch {
	case c.Package >= 1 && c.Package <= len(s.Packages) && c.Remote == 0:
		return t.pkg(&s.Packages[c.Package-1])
	case c.Remote >= 1 && c.Remote <= len(s.Remotes) && c.Package == 0:
		return t.remote(&s.Remotes[c.Remote-1])
	}
	return nil, fmt.Errorf("server %s has no package %d or remote %d", s.Name, c.Package, c.Remote)
}

type translator struct {
	ask     Asker
	omitted []Question
}

func (t *translator) pkg(p *Package) (*Launch, error) {
	cmd, err := p.command()
	if err != nil {
		return nil, err
	}
	l := &Launch{Transport: "stdio", Command: cmd}
	for _, in := range p.EnvironmentVariables {
		vs, err := t.value(in, Question{Key: in.Name, Kind: KindEnv})
		if err != nil {
			return nil, err
		}
		if len(vs) > 0 {
			l.Env = append(l.Env, Var{in.Name, vs[0]})
		}
	}
	runtimeArgs, err := t.args(p.RuntimeArguments)
	if err != nil {
		return nil, err
	}
	pkgArgs, err := t.args(p.PackageArguments)
	if err != nil {
		return nil, err
	}
	lit := func(ss ...string) []Value {
		out := make([]Value, len(ss))
		for i, s := range ss {
			out[i] = Value{Text: s}
		}
		return out
	}
	var ref string
	switch p.RegistryType {
	case TypeNPM:
		if err := exactVersion(p.Version); err != nil {
			return nil, err
		}
		if strings.HasPrefix(p.Identifier, "-") {
			return nil, fmt.Errorf("npm package %q: a name does not begin with \"-\"", p.Identifier)
		}
		ref = p.Identifier + "@" + p.Version
		if cmd == "npx" && !slices.ContainsFunc(runtimeArgs, func(v Value) bool { return v.Text == "-y" || v.Text == "--yes" }) {
			l.Args = lit("-y")
		}
		l.Args = append(append(l.Args, runtimeArgs...), lit(ref)...)
	case TypePyPI:
		if err := exactVersion(p.Version); err != nil {
			return nil, err
		}
		if strings.HasPrefix(p.Identifier, "-") || strings.ContainsAny(p.Identifier, "=<>!~ @;[") {
			return nil, fmt.Errorf("PyPI package %q: not a package name", p.Identifier)
		}
		ref = p.Identifier + "==" + p.Version
		if cmd == "pipx" {
			l.Args = lit("run")
		}
		l.Args = append(append(l.Args, runtimeArgs...), lit(ref)...)
	case TypeOCI:
		if ref, err = imageRef(p.Identifier, p.Version); err != nil {
			return nil, err
		}
		l.Args = append(lit("run", "-i", "--rm"), runtimeArgs...)
		for _, e := range l.Env { // the container sees only what -e passes
			l.Args = append(l.Args, lit("-e", e.Name)...)
		}
		l.Args = append(l.Args, lit(ref)...)
	}
	if err := checkRuntimeArgs(cmd, runtimeArgs); err != nil {
		return nil, err
	}
	l.Args = append(l.Args, pkgArgs...)
	l.What = p.RegistryType + " " + ref
	l.Omitted = t.omitted
	return l, nil
}

func (t *translator) remote(r *Remote) (*Launch, error) {
	l := &Launch{}
	switch r.Type {
	case TransportStreamableHTTP:
		l.Transport = "http"
	case TransportSSE:
		l.Transport = "sse"
	default:
		return nil, fmt.Errorf("remote transport %q is not supported: streamable-http or sse", r.Type)
	}
	u, err := t.fill(r.URL, r.Variables)
	if err != nil {
		return nil, err
	}
	if u.Secret {
		return nil, errors.New("a remote's URL with a secret in it is not supported: a secret goes in a header")
	}
	pu, err := url.Parse(u.Text)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || pu.User != nil {
		return nil, fmt.Errorf("remote URL %q: want http(s)://host/path", u.Text)
	}
	l.URL = u.Text
	for _, in := range r.Headers {
		vs, err := t.value(in, Question{Key: in.Name, Kind: KindHeader})
		if err != nil {
			return nil, err
		}
		if len(vs) > 0 {
			l.Headers = append(l.Headers, Var{in.Name, vs[0]})
		}
	}
	l.What = "remote " + l.URL
	l.Omitted = t.omitted
	return l, nil
}

// args renders arguments: a positional one as one word, a named one as
// its name and its value (two words: "-e", "K=V" as docker takes it); a
// repeated one so for each of its values.
func (t *translator) args(as []Argument) ([]Value, error) {
	var out []Value
	for i, a := range as {
		q := Question{Kind: KindArgument, Repeated: a.IsRepeated}
		switch a.Type {
		case ArgPositional:
			q.Key = a.ValueHint
			if q.Key == "" {
				q.Key = fmt.Sprintf("argument%d", i+1)
			}
		case ArgNamed:
			q.Key = strings.TrimLeft(a.Name, "-")
		}
		vs, err := t.value(a.Input, q)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if a.Type == ArgNamed {
				out = append(out, Value{Text: a.Name})
			} else if strings.HasPrefix(v.Text, "-") && !strings.HasPrefix(a.Value, "-") {
				// A value given for a positional argument is not an option.
				return nil, fmt.Errorf("argument %s: value %q begins with \"-\"", q.Key, v.Text)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// value renders one input: its value with its variables filled in, else
// what ask gives, else its default; none when it is left out.
func (t *translator) value(in Input, q Question) ([]Value, error) {
	if in.Value != "" {
		v, err := t.fill(in.Value, in.Variables)
		if err != nil {
			return nil, err
		}
		v.Secret = v.Secret || in.IsSecret
		return []Value{v}, nil
	}
	q.Description, q.Required, q.Secret, q.Default, q.Choices, q.Format = in.Description, in.IsRequired, in.IsSecret, in.Default, in.Choices, in.Format
	vs, err := t.answer(q)
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = Value{Text: v, Secret: in.IsSecret}
	}
	return out, err
}

// answer asks q: the answers (each one of its choices, if it has them),
// else its default, else a MissingError when it is required.
func (t *translator) answer(q Question) ([]string, error) {
	vs, err := t.ask(q)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		if q.Default != "" {
			return []string{q.Default}, nil
		}
		if q.Required {
			return nil, &MissingError{q}
		}
		t.omitted = append(t.omitted, q)
		return nil, nil
	}
	if len(vs) > 1 && !q.Repeated {
		return nil, fmt.Errorf("%s %s takes one value, not %d", q.Kind, q.Key, len(vs))
	}
	for _, v := range vs {
		if len(q.Choices) > 0 && !slices.Contains(q.Choices, v) {
			return nil, fmt.Errorf("%s %s: %q is not one of %s", q.Kind, q.Key, v, strings.Join(q.Choices, ", "))
		}
		if err := checkText(q.Kind+" "+q.Key, v); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// fill replaces each {name} of template that vars has by that variable's
// value; a placeholder vars does not have stays as it is.
func (t *translator) fill(template string, vars map[string]Input) (Value, error) {
	var b strings.Builder
	secret := false
	done := map[string]string{}
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		name := rest[i+1 : i+j]
		in, ok := vars[name]
		b.WriteString(rest[:i])
		rest = rest[i+j+1:]
		if !ok {
			b.WriteString("{" + name + "}")
			continue
		}
		v, seen := done[name]
		if !seen {
			q := Question{Key: name, Kind: KindVariable, Description: in.Description, Required: in.IsRequired,
				Secret: in.IsSecret, Default: in.Default, Choices: in.Choices, Format: in.Format}
			if in.Value != "" {
				v = in.Value
			} else {
				vs, err := t.answer(q)
				if err != nil {
					return Value{}, err
				}
				if len(vs) > 0 {
					v = vs[0]
				}
			}
			done[name] = v
		}
		secret = secret || in.IsSecret
		b.WriteString(v)
	}
	return Value{Text: b.String(), Secret: secret}, nil
}

// exactVersion refuses a version that names no one release: empty,
// "latest", a range or a wildcard.
func exactVersion(v string) error {
	if v == "" || strings.EqualFold(v, "latest") {
		return fmt.Errorf("version %q is not an exact version: a package is pinned to one", v)
	}
	if strings.ContainsAny(v, " ^~*<>=|,!@/:") {
		return fmt.Errorf("version %q is a range, not an exact version", v)
	}
	for _, part := range strings.Split(v, ".") {
		if part == "x" || part == "X" || part == "" {
			return fmt.Errorf("version %q is a range, not an exact version", v)
		}
	}
	return nil
}

// imageRef is the image an OCI package runs, pinned: its identifier's
// digest or tag, else its version as the tag; "latest" is no pin.
func imageRef(id, version string) (string, error) {
	if strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t") {
		return "", fmt.Errorf("image %q: not an image reference", id)
	}
	if strings.Contains(id, "@sha256:") {
		return id, nil
	}
	last := id[strings.LastIndexByte(id, '/')+1:]
	if _, tag, ok := strings.Cut(last, ":"); ok {
		if tag == "" || tag == "latest" {
			return "", fmt.Errorf("image %q: tag %q is not a pin", id, tag)
		}
		return id, nil
	}
	if err := exactVersion(version); err != nil {
		return "", fmt.Errorf("image %q: %w", id, err)
	}
	return id + ":" + version, nil
}

// runtimeFlags are the runtime arguments a package may give npx, bunx,
// uvx and pipx: none that would fetch another package than the one
// pinned, or from another index (-p, --from, --with, --index-url...).
var runtimeFlags = map[string][]string{
	"npx":  {"-y", "--yes", "-q", "--quiet", "--no-install", "--prefer-offline"},
	"bunx": {"--bun", "--silent"},
	"uvx":  {"-q", "--quiet", "--offline", "--isolated", "--python", "-p"},
	"pipx": {"--python", "-q", "--quiet"},
}

// takesValue are the runtime flags among runtimeFlags followed by a
// value.
var takesValue = map[string]bool{"--python": true, "-p": true}

// dockerRefused are docker run's flags that give a container the host's
// privileges; a server.json that asks for them is refused.
var dockerRefused = []string{"--privileged", "--cap-add", "--security-opt", "--pid", "--ipc", "--userns", "--uts", "--device", "--cgroupns", "--volumes-from"}

// checkRuntimeArgs refuses the runtime arguments of a package that would
// run something else than its pinned package, or a container with the
// host's privileges.
func checkRuntimeArgs(cmd string, args []Value) error {
	if cmd == "docker" || cmd == "podman" {
		for _, a := range args {
			flag, _, _ := strings.Cut(a.Text, "=")
			if slices.Contains(dockerRefused, flag) {
				return fmt.Errorf("runtime argument %q is refused: it gives the container the host's privileges", a.Text)
			}
		}
		return nil
	}
	allowed := runtimeFlags[cmd]
	for i := 0; i < len(args); i++ {
		flag, _, hasValue := strings.Cut(args[i].Text, "=")
		if cmd == "npx" && flag == "-p" {
			flag = "-p (--package)" // npx's -p is another package; uvx's is a Python
		}
		if !slices.Contains(allowed, flag) {
			return fmt.Errorf("runtime argument %q is not supported for %s: it could run another package than the one pinned", args[i].Text, cmd)
		}
		if takesValue[flag] && !hasValue {
			i++ // its value
		}
	}
	return nil
}
