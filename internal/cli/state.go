package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/postgres"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// StateFile is the store's file name in Switchboard's home.
const StateFile = "state.db"

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

// storeOpenTimeout bounds connecting to (and migrating) a PostgreSQL store.
const storeOpenTimeout = 30 * time.Second

// openStore opens the state store: the PostgreSQL database that --store
// names, else the one cfg's "store" names, else SQLite at
// $SWITCHBOARD_HOME/state.db (or --home's).
func (r *run) openStore(cfg *config.Config) (store.Store, error) {
	url := r.storeURL
	if url == "" && cfg != nil {
		url = cfg.Store.Postgres
	}
	if url != "" {
		ctx, cancel := context.WithTimeout(r.ctx, storeOpenTimeout)
		defer cancel()
		return postgres.Open(ctx, url, nil)
	}
	home, err := r.homeDir()
	if err != nil {
		return nil, err
	}
	return sqlite.Open(filepath.Join(home, StateFile), nil)
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

// runApprove pins the held definitions of a server, or of one tool.
func runApprove(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	return r.withStore(func(st store.Store) int {
		approved, err := control.Approve(r.ctx, st, r.args[0])
		return r.showApproved(approved, err)
	})
}

// showApproved prints what approve approved, or why nothing.
func (r *run) showApproved(approved []string, err error) int {
	for _, l := range approved {
		fmt.Fprintf(r.env.Stdout, "approved %s\n", launcher.Escape(l))
	}
	switch {
	case fault.CodeOf(err) == fault.CodeNotFound:
		msg := err.Error()
		if fe, ok := errors.AsType[*fault.Error](err); ok && fe.Err != nil {
			msg = fe.Err.Error() // without the code: the report gives it
		}
		return r.failf(ExitUsage, string(fault.CodeNotFound), "%s%s", msg, r.serverHint(r.args[0]))
	case err != nil:
		return r.fail(err)
	}
	return ExitOK
}

// runDiff shows, for each held definition of a server, what changed since
// it was approved.
func runDiff(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	return r.withStore(func(st store.Store) int {
		held, err := control.Diffs(r.ctx, st, r.args[0])
		if err != nil {
			return r.fail(err)
		}
		for _, h := range held {
			// drift.Diff escapes what it shows (reversibly, and more than
			// Escape does); Escape leaves its output as it is.
			fmt.Fprintf(r.env.Stdout, "== %s\n%s\n", launcher.Escape(h.Label), launcher.Escape(h.Diff))
		}
		if len(held) == 0 {
			fmt.Fprintf(r.env.Stdout, "no held definitions for %s%s\n", launcher.Escape(r.args[0]), r.serverHint(r.args[0]))
		}
		return ExitOK
	})
}

// runLog shows recent calls from the audit log.
func runLog(r *run) int {
	if !r.wantArgs(0, 1) {
		return ExitUsage
	}
	return r.withStore(func(st store.Store) int {
		f := r.logFilter()
		calls, err := st.Calls(r.ctx, f)
		if err != nil {
			return r.fail(err)
		}
		if len(calls) == 0 && len(r.args) == 1 {
			if hint := r.serverHint(r.args[0]); hint != "" {
				fmt.Fprintf(r.env.Stderr, "note: no server %q is configured%s\n", launcher.Escape(f.Server), hint)
			}
		}
		return r.showCalls(calls)
	})
}

// logFilter is log's filter: its argument, SERVER or SERVER:TOOL, and -n.
func (r *run) logFilter() store.CallFilter {
	f := store.CallFilter{Limit: r.limit, Caller: r.caller}
	if len(r.args) == 1 {
		server, tool, one := control.Cut(r.args[0])
		f.Server = server
		if one {
			f.Tool = server + ":" + tool
		}
	}
	return f
}

// showCalls prints calls of the audit log.
func (r *run) showCalls(calls []store.Call) int {
	if r.json {
		entries := make([]control.CallEntry, 0, len(calls))
		for _, c := range calls {
			entries = append(entries, control.EntryOf(c))
		}
		return r.printJSON(entries)
	}
	var rows [][]string
	for _, c := range calls {
		code := c.Code
		if code == "" {
			code = "-"
		}
		rows = append(rows, []string{c.Time.Local().Format(time.DateTime), c.Tool, c.Outcome, code,
			c.Latency.Round(time.Millisecond).String(), orDash(c.Caller), orDash(c.Profile), oneLine(c.ArgShape, 60)})
	}
	r.table("TIME\tTOOL\tOUTCOME\tCODE\tLATENCY\tCALLER\tPROFILE\tARGUMENTS", rows)
	return ExitOK
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
