package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
)

// place is where the clients' user files are: the user's home directory
// ($HOME, %USERPROFILE% on Windows) and the environment.
func (r *run) place() (clientconf.Place, error) {
	key := "HOME"
	if runtime.GOOS == "windows" {
		key = "USERPROFILE"
	}
	home, ok := r.env.LookupEnv(key)
	if !ok || home == "" {
		return clientconf.Place{}, fmt.Errorf("$%s is not set", key)
	}
	return clientconf.Place{Home: home, OS: runtime.GOOS, Getenv: func(k string) string {
		v, _ := r.env.LookupEnv(k)
		return v
	}}, nil
}

// importSource is one client file to import from.
type importSource struct {
	client *clientconf.Client
	path   string
}

// importSources finds the files to import from: --from's client or file,
// else every client file found in the user's home and the working
// directory.
func (r *run) importSources(from string) ([]importSource, error) {
	if from == "" {
		found, err := r.discover()
		if err != nil {
			return nil, err
		}
		var out []importSource
		for _, f := range found {
			out = append(out, importSource{f.Client, f.Path})
		}
		return out, nil
	}
	c, err := clientconf.Lookup(from)
	if err != nil {
		data, rerr := os.ReadFile(from)
		if rerr != nil {
			if strings.ContainsAny(from, `/\.`) {
				return nil, fmt.Errorf("--from %s: %v", from, rerr)
			}
			return nil, fmt.Errorf("--from: %v, and no file %s", err, from)
		}
		return []importSource{{sniffClient(from, data), from}}, nil
	}
	found, err := r.discover()
	if err != nil {
		return nil, err
	}
	var out []importSource
	for _, f := range found {
		if f.Client == c {
			out = append(out, importSource{f.Client, f.Path})
		}
	}
	if len(out) == 0 {
		p, _ := r.place()
		where := c.Paths(p)
		if wd, err := os.Getwd(); err == nil && c.ProjectPath(wd) != "" {
			where = append(where, c.ProjectPath(wd))
		}
		return nil, fmt.Errorf("no %s configuration found (looked at %s)", c.Name, strings.Join(where, ", "))
	}
	return out, nil
}

// sniffClient picks the client of a file named on the command line: the
// client whose usual place it is, by its last two path elements
// (".gemini/settings.json", "Claude/claude_desktop_config.json"), else the
// client whose shape it has (clientconf.Sniff).
func sniffClient(path string, data []byte) *clientconf.Client {
	tail := func(p string) string {
		return filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p))
	}
	want := tail(path)
	if abs, err := filepath.Abs(path); err == nil {
		want = tail(abs)
	}
	p := clientconf.Place{Home: "/home", OS: runtime.GOOS}
	byBase := map[string][]*clientconf.Client{} // a file name → the clients that use it
	for _, c := range clientconf.Clients() {
		places := c.Paths(p)
		if pp := c.ProjectPath("/project"); pp != "" {
			places = append(places, pp)
		}
		for _, place := range places {
			if tail(place) == want {
				return c
			}
			b := filepath.Base(place)
			if !slices.Contains(byBase[b], c) {
				byBase[b] = append(byBase[b], c)
			}
		}
	}
	if cs := byBase[filepath.Base(path)]; len(cs) == 1 {
		return cs[0] // a name only one client uses: claude_desktop_config.json, mcp_config.json
	}
	return clientconf.Sniff(path, data)
}

func (r *run) discover() ([]clientconf.Found, error) {
	p, err := r.place()
	if err != nil {
		return nil, fmt.Errorf("cannot find the clients' files: %v; name one with --from FILE", err)
	}
	wd, _ := os.Getwd()
	return clientconf.Discover(p, wd), nil
}
