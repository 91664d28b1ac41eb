// Package pkgpin finds the package that an npx-style launch runs (npx,
// bunx, pnpm dlx, npm exec, uvx), resolves its version against the
// package registry (npm's packument, PyPI's JSON API) and rewrites the
// launch to run exactly one version: so that a person's approval of a
// server covers the package version and its integrity, and a new version
// published behind "latest" never runs unapproved (docs/PINS.md).
//
// It does HTTP to the registry and nothing else; it imports nothing of
// this module. What is pinned, held or approved is its caller's (host).
package pkgpin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// The registries.
const (
	NPM  = "npm"
	PyPI = "pypi"
)

// Defaults, when neither the server's environment nor the program's names
// a registry.
const (
	DefaultNPMRegistry = "https://registry.npmjs.org"
	DefaultPyPIIndex   = "https://pypi.org"
)

// maxDocument caps a registry's answer (a packument of a package with
// thousands of versions is a few MiB).
const maxDocument = 32 << 20

// Spec is the package a launch runs.
type Spec struct {
	Registry string // NPM or PyPI
	Name     string
	// Want is what the launch asks for: "" (the latest), a tag
	// ("latest", "next"), an exact version or a range ("^1", "1.x").
	Want string
	// Arg is the index in the launch's arguments of the package's
	// argument, which Rewrite replaces.
	Arg int
}

// Pin is a resolved package: an exact version and its integrity.
type Pin struct {
	Registry string `json:"registry"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	// Integrity is npm's dist.integrity (SRI, "sha512-..."), or for PyPI
	// "sha256:" of the sorted SHA-256 digests of the release's files,
	// one a line.
	Integrity string `json:"integrity"`
}

// npmName is a registry package name, scoped or not.
var npmName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)

// pypiName is a PyPI project name (PEP 508).
var pypiName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// valueFlags are the runners' flags that take a value as the next
// argument; a flag that names the package apart from the command
// (--package, --from, --spec) makes the launch one this package does not
// pin.
var valueFlags = map[string]bool{
	"--registry": true, "--cache": true, "--userconfig": true, "-c": true, "--call": true,
	"--python": true, "-p": true, "--with": true, "--index-url": true, "--index": true,
}

// unpinnable are flags that name the package apart from the command.
var unpinnable = map[string]bool{"--package": true, "--from": true, "--spec": true, "--with": true, "--with-requirements": true}

// Find returns the package that command with args runs, when it is an
// npx-style runner naming a registry package: npx, bunx, pnpm dlx, npm
// exec (npm x), uvx. A local path, a URL, a git or file spec, or a runner
// told the package apart (--package, --from, --spec) is not found.
func Find(command string, args []string) (Spec, bool) {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(command), ".cmd"), ".exe")
	start := 0
	registry := NPM
	switch base {
	case "npx", "bunx":
	case "pnpm":
		if len(args) == 0 || args[0] != "dlx" {
			return Spec{}, false
		}
		start = 1
	case "npm":
		if len(args) == 0 || (args[0] != "exec" && args[0] != "x") {
			return Spec{}, false
		}
		start = 1
	case "uvx":
		registry = PyPI
	default:
		return Spec{}, false
	}
	for i := start; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return Spec{}, false // what follows is the command, not a package
		}
		if strings.HasPrefix(a, "-") {
			flag, _, eq := strings.Cut(a, "=")
			if unpinnable[flag] || (flag == "-p" && registry == NPM) {
				return Spec{}, false
			}
			if !eq && valueFlags[flag] {
				i++
			}
			continue
		}
		if registry == PyPI {
			return pypiSpec(a, i)
		}
		return npmSpec(a, i)
	}
	return Spec{}, false
}

// npmSpec parses name, name@want or @scope/name@want.
func npmSpec(a string, i int) (Spec, bool) {
	name, want := a, ""
	if at := strings.LastIndexByte(a, '@'); at > 0 {
		name, want = a[:at], a[at+1:]
	}
	if !npmName.MatchString(name) || strings.ContainsAny(want, ":/ ") {
		return Spec{}, false
	}
	return Spec{Registry: NPM, Name: name, Want: want, Arg: i}, true
}

// pypiSpec parses name, name@version, name@latest or name==version.
func pypiSpec(a string, i int) (Spec, bool) {
	name, want := a, ""
	if n, v, ok := strings.Cut(a, "=="); ok {
		name, want = n, v
	} else if n, v, ok := strings.Cut(a, "@"); ok {
		name, want = n, v
	}
	if !pypiName.MatchString(name) || strings.ContainsAny(want, "<>=!~,; :/") {
		return Spec{}, false
	}
	return Spec{Registry: PyPI, Name: name, Want: want, Arg: i}, true
}

// Rewrite returns args with spec's argument naming version exactly:
// name@version (npm, uvx).
func Rewrite(args []string, spec Spec, version string) []string {
	out := slices.Clone(args)
	out[spec.Arg] = spec.Name + "@" + version
	return out
}

// Resolver asks a registry which version a Spec means.
type Resolver struct {
	// Client makes the requests; nil means http.DefaultClient. The
	// caller bounds each with its context.
	Client *http.Client
}

// Resolve returns the exact version spec names and its integrity, from
// base, the registry's URL (npm's registry, or a PyPI index: a "/simple"
// suffix is dropped, since the JSON API lives beside it).
func (r *Resolver) Resolve(ctx context.Context, spec Spec, base string) (Pin, error) {
	switch spec.Registry {
	case NPM:
		return r.npm(ctx, spec, base)
	case PyPI:
		return r.pypi(ctx, spec, base)
	}
	return Pin{}, fmt.Errorf("pkgpin: unknown registry %q", spec.Registry)
}

// packument is the part of npm's package document used here.
type packument struct {
	DistTags map[string]string `json:"dist-tags"`
	Versions map[string]struct {
		Dist struct {
			Integrity string `json:"integrity"`
			Shasum    string `json:"shasum"`
		} `json:"dist"`
	} `json:"versions"`
}

func (r *Resolver) npm(ctx context.Context, spec Spec, base string) (Pin, error) {
	if base == "" {
		base = DefaultNPMRegistry
	}
	u := strings.TrimSuffix(base, "/") + "/" + strings.Replace(url.PathEscape(spec.Name), "%40", "@", 1)
	var doc packument
	// The abbreviated document ("corgi") holds what is needed, at a
	// fraction of the size.
	if err := r.get(ctx, u, "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8", &doc); err != nil {
		return Pin{}, err
	}
	version, err := pick(spec, doc.DistTags, func(yield func(string) bool) {
		for v := range doc.Versions {
			if !yield(v) {
				return
			}
		}
	})
	if err != nil {
		return Pin{}, err
	}
	dist := doc.Versions[version].Dist
	integrity := dist.Integrity
	if integrity == "" && dist.Shasum != "" {
		integrity = "sha1:" + dist.Shasum
	}
	if integrity == "" {
		return Pin{}, fmt.Errorf("pkgpin: %s@%s: the registry gives no integrity", spec.Name, version)
	}
	return Pin{Registry: NPM, Name: spec.Name, Version: version, Integrity: integrity}, nil
}

// pypiRelease is the part of PyPI's JSON API document used here.
type pypiRelease struct {
	Info struct {
		Version string `json:"version"`
	} `json:"info"`
	URLs []struct {
		Digests struct {
			SHA256 string `json:"sha256"`
		} `json:"digests"`
	} `json:"urls"`
}

func (r *Resolver) pypi(ctx context.Context, spec Spec, base string) (Pin, error) {
	if base == "" {
		base = DefaultPyPIIndex
	}
	base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/simple"), "/")
	u := base + "/pypi/" + url.PathEscape(spec.Name) + "/json"
	if spec.Want != "" && spec.Want != "latest" {
		u = base + "/pypi/" + url.PathEscape(spec.Name) + "/" + url.PathEscape(spec.Want) + "/json"
	}
	var doc pypiRelease
	if err := r.get(ctx, u, "application/json", &doc); err != nil {
		return Pin{}, err
	}
	if doc.Info.Version == "" || len(doc.URLs) == 0 {
		return Pin{}, fmt.Errorf("pkgpin: %s: the index gives no release files", spec.Name)
	}
	var digests []string
	for _, f := range doc.URLs {
		if f.Digests.SHA256 == "" {
			return Pin{}, fmt.Errorf("pkgpin: %s %s: a release file has no SHA-256 digest", spec.Name, doc.Info.Version)
		}
		digests = append(digests, f.Digests.SHA256)
	}
	slices.Sort(digests)
	sum := sha256.Sum256([]byte(strings.Join(digests, "\n")))
	return Pin{Registry: PyPI, Name: spec.Name, Version: doc.Info.Version, Integrity: "sha256:" + hex.EncodeToString(sum[:])}, nil
}

// pick chooses the version spec wants among versions: a tag, an exact
// version, or the highest that a range allows (pre-releases only when
// the range names one).
func pick(spec Spec, tags map[string]string, versions func(func(string) bool)) (string, error) {
	want := spec.Want
	if want == "" {
		want = "latest"
	}
	if v, ok := tags[want]; ok {
		return v, nil
	}
	all := slices.Collect(versions)
	if slices.Contains(all, want) {
		return want, nil
	}
	c, err := semver.NewConstraint(want)
	if err != nil {
		return "", fmt.Errorf("pkgpin: %s@%s: no such tag or version, and not a range: %w", spec.Name, want, err)
	}
	var best *semver.Version
	bestRaw := ""
	for _, raw := range all {
		v, err := semver.NewVersion(raw)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestRaw = v, raw
		}
	}
	if best == nil {
		return "", fmt.Errorf("pkgpin: %s@%s: no version matches", spec.Name, want)
	}
	return bestRaw, nil
}

// ErrStatus is a registry's answer other than 200.
var ErrStatus = errors.New("pkgpin: the registry answered")

func (r *Resolver) get(ctx context.Context, u, accept string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("pkgpin: %w", err)
	}
	req.Header.Set("Accept", accept)
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("pkgpin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w %s for %s", ErrStatus, resp.Status, u)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(out); err != nil {
		return fmt.Errorf("pkgpin: %s: %w", u, err)
	}
	return nil
}

// RegistryURL returns the registry a launch of spec uses: the server's
// environment's (a server inherits no other), else, for npm, the
// "registry=" line of npmrc (the user's .npmrc, "" for none), else the
// default.
func RegistryURL(spec Spec, serverEnv map[string]string, npmrc string) string {
	keys := []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"}
	def := DefaultNPMRegistry
	if spec.Registry == PyPI {
		keys, def = []string{"UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_INDEX_URL"}, DefaultPyPIIndex
	}
	for _, k := range keys {
		if v := serverEnv[k]; v != "" {
			return v
		}
	}
	if spec.Registry == NPM {
		for line := range strings.Lines(npmrc) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if ok && strings.TrimSpace(k) == "registry" && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
	}
	return def
}
