package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// Launch is what a person approves when approving how a server is
// launched or reached (see docs/PINS.md): everything that decides which
// program runs, or which endpoint is dialled, with what it is given. A
// secret is never part of it, so that rotating a token does not change
// it: secret arguments and the secrets in a URL are shown as [Masked],
// and an environment variable is kept as its name and the hash of its
// value with the secret in it masked (a secret-named variable's whole
// value is masked).
type Launch struct {
	Transport Transport `json:"transport"`
	Command   string    `json:"command,omitempty"`
	Args      []string  `json:"args,omitempty"`
	// Env maps each environment variable's name to "sha256:<hex>" of its
	// value with secrets masked ([Masked] alone for a value that is all
	// secret).
	Env map[string]string `json:"env,omitempty"`
	Cwd string            `json:"cwd,omitempty"`
	URL string            `json:"url,omitempty"`
	// Headers are the names of the headers sent, sorted; their values
	// are credentials as often as not, and are left out.
	Headers []string `json:"headers,omitempty"`
	// Package is the registry package an npx-style launch (npx, bunx,
	// pnpm dlx, npm exec, uvx) runs, resolved to an exact version. Launch
	// leaves it nil: resolving it asks the registry, which is the host's
	// to do.
	Package *LaunchPackage `json:"package,omitempty"`
}

// LaunchPackage is a package resolved to an exact version.
type LaunchPackage struct {
	Registry string `json:"registry"` // "npm" or "pypi"
	Name     string `json:"name"`
	Version  string `json:"version"`
	// Integrity is npm's dist.integrity, or for PyPI the hash of the
	// release's files' digests.
	Integrity string `json:"integrity"`
}

// Launch returns how s is launched or reached, without its secrets. An
// unusable server (never launched) has none: nil.
func (s *Server) Launch() *Launch {
	if s == nil || s.Unusable != nil {
		return nil
	}
	secrets := s.SecretValues()
	l := &Launch{Transport: s.Transport, Command: Mask(s.Command, secrets), Cwd: s.Cwd}
	for i, a := range s.Args {
		if v, ok := secretArgValue(s.Args, i); ok {
			a = strings.Replace(a, v, Masked, 1)
		}
		l.Args = append(l.Args, Mask(a, secrets))
	}
	if len(s.Env) > 0 {
		l.Env = make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			if before, _, after, ok := SecretEnv(k, v); ok {
				if before == "" && after == "" {
					l.Env[k] = Masked
					continue
				}
				v = before + Masked + after
			}
			sum := sha256.Sum256([]byte(v))
			l.Env[k] = "sha256:" + hex.EncodeToString(sum[:])
		}
	}
	if s.URL != "" {
		l.URL = redactURLWith(s.URL, Masked)
	}
	for k := range s.Headers {
		l.Headers = append(l.Headers, strings.ToLower(k))
	}
	slices.Sort(l.Headers)
	l.Headers = slices.Compact(l.Headers)
	return l
}

// Definition is the launch's canonical JSON: keys in a fixed order (the
// environment's sorted), no insignificant whitespace. It is a storage
// format: launch pins written by one version must match what the next
// computes for the same launch.
func (l *Launch) Definition() []byte {
	b, _ := json.Marshal(l) // strings, slices and a map: cannot fail
	return b
}
