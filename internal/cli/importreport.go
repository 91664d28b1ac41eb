package cli

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// importJSON is an item as import --json reports it.
type importJSON struct {
	Name        string   `json:"name"`
	From        string   `json:"from"` // the name in the client's file
	Client      string   `json:"client"`
	File        string   `json:"file"`
	Transport   string   `json:"transport"`
	Status      string   `json:"status"` // add (--dry-run), added, skipped, failed
	Reason      string   `json:"reason,omitempty"`
	Replaces    string   `json:"replaces,omitempty"`
	Credentials []string `json:"credentials"`
	Prompts     []string `json:"prompts"`
}

// describe is an entry in one line: its transport and command or URL
// (credentials in the URL's user part masked).
func describe(e clientconf.Entry) string {
	if e.Transport == clientconf.Stdio {
		return "stdio: " + shellQuote(append([]string{e.Command}, e.Args...))
	}
	u := e.URL
	if pu, err := url.Parse(u); err == nil && pu.User != nil {
		u = pu.Redacted()
	}
	return string(e.Transport) + ": " + u
}

type importNote struct {
	path string
	clientconf.Note
}

// showPlan prints, file by file, what import will add and skip and why.
func (r *importer) showPlan(srcs []importSource, items []*importItem, notes []importNote) {
	if r.json {
		return
	}
	w := r.env.Stdout
	for _, src := range srcs {
		fmt.Fprintf(w, "%s: %s\n", src.client.Name, launcher.Escape(src.path))
		for _, it := range items {
			if it.src != src {
				continue
			}
			from := ""
			if it.name != it.entry.Name {
				from = fmt.Sprintf(" (%q in the file)", it.entry.Name)
			}
			if it.skip != "" {
				fmt.Fprintf(w, "  skip %s: %s\n", launcher.Escape(strconv.Quote(it.entry.Name)), launcher.Escape(it.skip))
				continue
			}
			verb := "add"
			if it.replace != "" {
				verb = fmt.Sprintf("replace %q with", it.replace)
			}
			fmt.Fprintf(w, "  %s %s%s: %s\n", verb, launcher.Escape(strconv.Quote(it.name)), launcher.Escape(from), launcher.Escape(describe(it.entry)))
			for _, c := range it.credIDs {
				if _, ok := it.creds[c]; ok {
					fmt.Fprintf(w, "      credential %s moves to creds.json\n", c)
				}
			}
			for _, p := range it.prompts {
				fmt.Fprintf(w, "      credential %s is asked for: %s\n", p.Name, launcher.Escape(p.Prompt))
			}
		}
		for _, n := range notes {
			if n.path == src.path {
				fmt.Fprintf(w, "  note: %s\n", launcher.Escape(n.Note.String()))
			}
		}
	}
}

// importReport reports the outcome: with --json the whole import as one
// object (kept for connect --move, which prints its own), else the
// servers added. status is what a server to be added is: "add" for the
// plan, "added" once written.
func (r *importer) importReport(srcs []importSource, items []*importItem, notes []importNote, status string) int {
	files := make([]map[string]string, len(srcs))
	for i, s := range srcs {
		files[i] = map[string]string{"client": s.client.ID, "file": s.path}
	}
	servers := make([]importJSON, 0, len(items))
	for _, it := range items {
		j := importJSON{Name: it.name, From: it.entry.Name, Client: it.src.client.ID, File: it.src.path,
			Transport: string(it.entry.Transport), Status: status, Replaces: it.replace,
			Credentials: slices.Clone(it.credIDs), Prompts: []string{}}
		if j.Credentials == nil {
			j.Credentials = []string{}
		}
		for _, p := range it.prompts {
			j.Prompts = append(j.Prompts, p.Name)
		}
		switch {
		case it.skip != "":
			j.Status, j.Reason = "skipped", it.skip
		case it.failed != nil:
			j.Status, j.Reason = "failed", it.failed.f.Message
		case status == "":
			j.Status = "checked"
		}
		servers = append(servers, j)
	}
	ns := make([]string, len(notes))
	for i, n := range notes {
		ns[i] = n.path + ": " + n.Note.String()
	}
	r.imported = map[string]any{"files": files, "servers": servers, "notes": ns, "dryRun": r.imp.dryRun}
	if r.json {
		if r.imp.move {
			return ExitOK
		}
		return r.printJSON(r.imported)
	}
	w := r.env.Stdout
	if r.imp.dryRun {
		fmt.Fprintln(w, "dry run: nothing was written")
		return ExitOK
	}
	for _, it := range items {
		if it.skip != "" || it.failed != nil || status != "added" {
			continue
		}
		fmt.Fprintf(w, "added server %q", it.name)
		if names := sortedKeys(it.creds); len(names) > 0 {
			fmt.Fprintf(w, " (credentials %s kept in creds.json)", strings.Join(names, ", "))
		}
		fmt.Fprintln(w)
	}
	return ExitOK
}
