package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// WarnedFile, in the home, holds a hash of each warning line the commands
// printed last, so that a warning is printed once per change and not on
// every command.
const WarnedFile = "warned.json"

// warnFindings prints the servers' findings of severity warn or above on
// stderr, once per command (tools, call, servers, without -v: then the
// host logs them), escaped: they quote what servers sent. Findings of
// severity high and above (a tool held for review) are printed on every
// command, one line each. Those of severity warn are printed one line per
// server, kind and detail (six tools shadowing six of another server's
// make one line), and only when the line is new or changed since the
// commands printed it for this home; the others are counted in one line
// that says where to see them. Info findings wait for servers -v and
// --json.
func (r *run) warnFindings() {
	type group struct {
		f     host.Finding
		items []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, f := range r.host.Findings() {
		switch {
		case f.Severity.AtLeast(host.SeverityHigh):
			fmt.Fprintf(r.env.Stderr, "warning: %s\n", launcher.Escape(findingLine(f)))
		case f.Severity.AtLeast(host.SeverityWarn):
			k := f.Server + "\x00" + f.Kind + "\x00" + f.Detail
			g := byKey[k]
			if g == nil {
				g = &group{f: f}
				byKey[k] = g
				groups = append(groups, g)
			}
			if f.Item != "" {
				g.items = append(g.items, f.Item)
			}
		}
	}
	var lines []string
	for _, g := range groups {
		f := g.f
		f.Item = ""
		line := findingLine(f)
		switch len(g.items) {
		case 0:
		case 1:
			line = findingLine(g.f)
		default:
			line += fmt.Sprintf(" (%d: %s)", len(g.items), strings.Join(g.items, ", "))
		}
		lines = append(lines, line)
	}
	shown := r.warnedBefore()
	seen := make([]string, 0, len(lines))
	unchanged := 0
	for _, line := range lines {
		h := lineHash(line)
		seen = append(seen, h)
		if slices.Contains(shown, h) {
			unchanged++
			continue
		}
		fmt.Fprintf(r.env.Stderr, "warning: %s\n", launcher.Escape(line))
	}
	if unchanged > 0 {
		fmt.Fprintf(r.env.Stderr, "switchboard: %s shown before, unchanged ('switchboard servers -v' lists them)\n", plural(unchanged, "warning"))
	}
	slices.Sort(seen)
	if !slices.Equal(seen, shown) {
		r.rememberWarned(seen)
	}
}

// lineHash identifies a warning line in WarnedFile.
func lineHash(line string) string {
	sum := sha256.Sum256([]byte(line))
	return hex.EncodeToString(sum[:12])
}

// warnedBefore returns the hashes, sorted, of the warning lines printed
// last for this home; none when the file is missing or unreadable.
func (r *run) warnedBefore() []string {
	home, err := r.homeDir()
	if err != nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(home, WarnedFile))
	if err != nil {
		return nil
	}
	var hashes []string
	if json.Unmarshal(data, &hashes) != nil {
		return nil
	}
	slices.Sort(hashes)
	return hashes
}

// rememberWarned keeps the hashes of the warning lines now in force, so
// that the next command prints only what changed. A home that cannot be
// written keeps printing every warning.
func (r *run) rememberWarned(hashes []string) {
	home, err := r.homeDir()
	if err != nil {
		return
	}
	if _, err := os.Stat(home); err != nil {
		return // the home is made by the commands that keep something there
	}
	data, _ := json.Marshal(hashes)
	confedit.WriteAtomic(filepath.Join(home, WarnedFile), data, 0o600) //nolint:errcheck // see above
}

// findingLine is a finding as one line, its severity first.
func findingLine(f host.Finding) string {
	return "[" + string(f.Severity) + "] " + f.String()
}
