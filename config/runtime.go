package config

import (
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"
)

// Runtimes are the keys a server's "runtime" object may name: the
// runtimes whose version the launcher can check before it starts the
// server ("node" for npx and node, "uv" for uvx, "python" for python3...).
var Runtimes = []string{"bun", "deno", "docker", "node", "python", "uv"}

// decodeRuntime decodes a server's "runtime" object: runtime name to a
// version requirement (">=20", "^3.11"; "" asks only that the runtime be
// installed).
func (d *decoder) decodeRuntime(n *node, p *jsonPath, server string) (*orderedMap, bool) {
	m, ok := d.strMap(n, p, server)
	if !ok {
		return nil, false
	}
	for _, k := range m.keys {
		fp := p.k(k)
		if !slices.Contains(Runtimes, k) {
			msg := fmt.Sprintf("unknown runtime %s: want %s", quote(k), quoteList(Runtimes))
			if s := closest(k, Runtimes); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.add(fp, server, msg, nil)
			ok = false
			continue
		}
		if v := m.m[k]; v != "" {
			if _, err := semver.NewConstraint(v); err != nil {
				d.add(fp, server, fmt.Sprintf(`invalid version requirement %s: want e.g. ">=20" or "^3.11"`, quote(v)), nil)
				ok = false
			}
		}
	}
	return m, ok
}
