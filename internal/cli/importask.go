package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/internal/confedit"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// asker asks a person at a terminal.
type asker struct {
	f  *os.File
	in *bufio.Reader
	w  io.Writer
}

// asker returns an asker when stdin is a terminal, else nil.
func (r *importer) asker() *asker { return terminalAsker(r.env) }

func (a *asker) line(q string) (string, bool) {
	fmt.Fprint(a.w, q)
	s, err := a.in.ReadString('\n')
	if err != nil && s == "" {
		return "", false
	}
	return strings.TrimRight(s, "\r\n"), true
}

func (a *asker) password(q string) (string, bool) {
	fmt.Fprint(a.w, q)
	b, err := term.ReadPassword(int(a.f.Fd()))
	fmt.Fprintln(a.w)
	return string(b), err == nil
}

// promptSecret asks for a prompted credential, masked when the client
// marks it a password. A value given once serves every server that
// refers to it.
func (r *importer) promptSecret(a *asker, it *importItem, s clientconf.Secret) (string, bool) {
	if v, ok := r.imp.secrets[s.Name]; ok {
		return v, true
	}
	q := fmt.Sprintf("%s (credential %s for server %q): ", launcher.Escape(s.Prompt), s.Name, it.name)
	var v string
	var ok bool
	if s.Password {
		v, ok = a.password(q)
	} else {
		v, ok = a.line(q)
	}
	if !ok || v == "" {
		return "", false
	}
	if r.imp.secrets == nil {
		r.imp.secrets = map[string]string{}
	}
	r.imp.secrets[s.Name] = v
	return v, true
}

// resolveClash settles a name it shares with clash, a server already
// there or imported before it: a person at a terminal chooses to rename,
// skip or replace; otherwise it is skipped.
func (r *importer) resolveClash(it *importItem, clash string, a *asker, existing *confedit.Object, names map[string]*importItem) {
	free := func(n string) bool {
		if _, ok := names[strings.ToLower(n)]; ok {
			return false
		}
		for _, m := range existing.Members {
			if strings.EqualFold(m.Key, n) {
				return false
			}
		}
		return true
	}
	suggestion := it.name + "-" + it.src.client.ID
	for i := 2; !free(suggestion); i++ {
		suggestion = fmt.Sprintf("%s-%s-%d", it.name, it.src.client.ID, i)
	}
	_, isImported := names[strings.ToLower(clash)]
	why := fmt.Sprintf("a server named %q is there already", clash)
	if isImported {
		why = fmt.Sprintf("a server named %q is imported from another file", clash)
	}
	if a == nil || r.imp.dryRun {
		it.skip = why + ": import with --prefix P, or remove it first"
		if a != nil {
			it.skip = why + ": you will be asked to rename, skip or replace it"
		}
		return
	}
	opts := "[r]ename to " + suggestion + ", [s]kip"
	if !isImported {
		opts += ", re[p]lace"
	}
	for {
		ans, ok := a.line(fmt.Sprintf("Server %q from %s: %s. %s? ", launcher.Escape(it.entry.Name), launcher.Escape(it.src.path), launcher.Escape(why), opts))
		if !ok {
			it.skip = why
			return
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "r", "rename", "":
			it.name = suggestion
			return
		case "s", "skip":
			it.skip = why + ": skipped"
			return
		case "p", "replace":
			if !isImported {
				it.replace = clash
				return
			}
		}
	}
}
