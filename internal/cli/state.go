package cli

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/state"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// StateFile is the store's file name in Switchboard's home.
const StateFile = state.File

// homeDir is Switchboard's home: --home, else $SWITCHBOARD_HOME, else
// ~/.switchboard.
func (r *run) homeDir() (string, error) {
	if r.home != "" {
		return r.home, nil
	}
	return config.Home(r.env.LookupEnv)
}

// leftoverDir is where servers' process groups are recorded when they
// cannot have a PID namespace (host.Options.LeftoverDir): "pgroups" in
// the home; "" when there is no home.
func (r *run) leftoverDir() string {
	home, err := r.homeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, "pgroups")
}

// sandboxOptions sets where the sandbox looks, from this command's
// environment: Switchboard's home, never opened to a server, and the
// servers' private directories, $XDG_CACHE_HOME/switchboard/servers else
// ~/.cache/switchboard/servers (the host's default when neither is set
// here; the host never puts them in Switchboard's home).
func (r *run) sandboxOptions(opts *host.Options) {
	home, err := r.homeDir()
	if err != nil {
		return
	}
	opts.SwitchboardHome = absPath(home)
	cache := ""
	if d, ok := r.env.LookupEnv("XDG_CACHE_HOME"); ok && filepath.IsAbs(d) {
		cache = filepath.Join(d, "switchboard", "servers")
	} else if h, ok := r.env.LookupEnv("HOME"); ok && filepath.IsAbs(h) {
		cache = filepath.Join(h, ".cache", "switchboard", "servers")
	}
	opts.SandboxCacheDir = cache
}

// openStore opens the state store: the PostgreSQL database that --store
// names, else the one cfg's "store" names, else SQLite at
// $SWITCHBOARD_HOME/state.db (or --home's).
func (r *run) openStore(cfg *config.Config) (store.Store, error) {
	url := r.storeURL
	if url == "" && cfg != nil {
		url = cfg.Store.Postgres
	}
	home := ""
	if url == "" {
		var err error
		if home, err = r.homeDir(); err != nil {
			return nil, err
		}
	}
	return state.Open(r.ctx, url, home)
}

// withStore runs f with the store open. Without --store the configuration
// is loaded, since it may name the store.
func (r *run) withStore(f func(st store.Store) int) int {
	var cfg *config.Config
	if r.storeURL == "" {
		var err error
		if cfg, err = r.loadUserConfig(); err != nil { // it alone names the store
			return r.configError(err)
		}
	}
	st, err := r.openStore(cfg)
	if err != nil {
		return r.configError(err)
	}
	defer st.Close()
	return f(st)
}

// checkStoreFlag returns what is wrong with --store's value, or nil. It
// never quotes the value, which may hold a password.
func checkStoreFlag(v string) error {
	if v == "" {
		return nil
	}
	cfg := &config.Config{Store: config.Store{Postgres: v}}
	if cfg.Validate() != nil {
		return errors.New("--store must be a PostgreSQL URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE")
	}
	return nil
}

// serverHint is " (did you mean X?)" when target (SERVER or SERVER:TOOL)
// names no configured server and one is a likely spelling of it; "".
func (r *run) serverHint(target string) string {
	cfg, err := r.loadUserConfig()
	if err != nil {
		return ""
	}
	var names []string
	for _, s := range cfg.Servers {
		if target == s.Name || strings.HasPrefix(target, s.Name+":") {
			return ""
		}
		names = append(names, s.Name)
	}
	server, _, _ := control.Cut(target)
	return didYouMean(server, names)
}
