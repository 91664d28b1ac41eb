package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/mcpregistry"
)

// registryMatch is a server search --registry found, as --json prints it.
type registryMatch struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Transports  []string `json:"transports"`
	Status      string   `json:"status,omitempty"`
	Repository  string   `json:"repository,omitempty"`
	WebsiteURL  string   `json:"websiteUrl,omitempty"`
}

// Bounds of a registry search: the pages read, and the servers a page
// asks for.
const (
	registryPages    = 10
	registryPageSize = 100
)

// runSearchRegistry lists the latest version of the registry's servers
// whose name, title or description holds every word: the registry is
// asked for the names holding the longest word (its search matches
// names), page after page, until k match.
func runSearchRegistry(r *run, url string, k int) int {
	if !r.wantArgs(1, -1) {
		return ExitUsage
	}
	if k < 1 {
		return r.usagef("-k is at least 1")
	}
	c, err := r.registryClient(url)
	if err != nil {
		return r.usagef("%v", err)
	}
	var words []string
	for _, a := range r.args {
		words = append(words, strings.Fields(strings.ToLower(a))...)
	}
	longest := slices.MaxFunc(words, func(a, b string) int { return len(a) - len(b) })
	matches := []registryMatch{}
	cursor := ""
	for range registryPages {
		page, err := c.List(r.ctx, mcpregistry.ListOptions{Search: longest, Cursor: cursor, Limit: registryPageSize, Latest: true})
		if err != nil {
			return r.registryFailure(err)
		}
		for _, e := range page.Servers {
			s := e.Server
			text := strings.ToLower(s.Name + " " + s.Title + " " + s.Description)
			if len(matches) == k || !allIn(words, text) {
				continue
			}
			m := registryMatch{Name: s.Name, Title: s.Title, Version: s.Version, Description: s.Description,
				Transports: orEmpty(s.Transports()), WebsiteURL: s.WebsiteURL}
			if e.Meta.Official != nil {
				m.Status = e.Meta.Official.Status
			}
			if s.Repository != nil {
				m.Repository = s.Repository.URL
			}
			matches = append(matches, m)
		}
		if cursor = page.NextCursor; cursor == "" || len(matches) == k {
			break
		}
	}
	if r.json {
		return r.printJSON(matches)
	}
	if len(matches) == 0 {
		fmt.Fprintf(r.env.Stderr, "no server of %s matches %q\n", launcher.Escape(c.URL()), launcher.Escape(strings.Join(words, " ")))
		return ExitOK
	}
	rows := make([][]string, len(matches))
	for i, m := range matches {
		desc := m.Description
		if m.Status != "" && m.Status != "active" {
			desc = "(" + m.Status + ") " + desc
		}
		rows[i] = []string{m.Name, m.Version, strings.Join(m.Transports, ","), oneLine(desc, 80)}
	}
	r.table("NAME\tVERSION\tTRANSPORTS\tDESCRIPTION", rows)
	fmt.Fprintf(r.env.Stderr, "add one with 'switchboard add --registry NAME[@VERSION]'\n")
	return ExitOK
}

// allIn reports whether text holds every word.
func allIn(words []string, text string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}
