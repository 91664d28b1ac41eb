package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/state"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// saveError is why a server was not saved: what report prints, and the
// exit code.
type saveError struct {
	exit   int
	f      failure
	advice []string
}

func (e *saveError) Error() string {
	return strings.Join(append([]string{e.f.Message}, e.advice...), "\n")
}

// reportSave reports se and returns its exit code.
func (r *run) reportSave(se *saveError) int { return r.report(se.exit, se.f, se.advice...) }

func usageErr(err error) *saveError {
	return &saveError{exit: ExitUsage, f: failure{Code: codeUsage, Message: err.Error()}}
}

func configErr(err error) *saveError {
	return &saveError{exit: ExitUsage, f: failure{Code: codeConfig, Message: err.Error()}}
}

// save checks e (unless --no-verify) and writes it: its credentials to
// creds.json, then the server to the configuration. The server must not
// be there already.
func (r *run) save(e *entry) int {
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	add := addServer(path, e)
	if se := r.check(path, e, add); se != nil {
		return r.reportSave(se)
	}
	if se := r.write(path, e, add, nil); se != nil {
		return r.reportSave(se)
	}
	return r.done(fmt.Sprintf("added server %q to %s", e.name, path), e.name, path, sortedKeys(e.creds))
}

// addServer is the edit that adds e to the servers of the file at path,
// which must not have it yet.
func addServer(path string, e *entry) func(*confedit.Object) error {
	return func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			for _, m := range servers.Members {
				if strings.EqualFold(m.Key, e.name) {
					return fmt.Errorf("%s already has a server %q: remove it first ('switchboard remove %s'), or choose another NAME", path, m.Key, m.Key)
				}
			}
			return servers.SetValue(e.name, e.obj)
		})
	}
}

// check builds the candidate configuration, the file at path with apply
// done and e's credentials over the stored ones, and checks e's server in
// it (unless --no-verify). Nothing is written.
func (r *run) check(path string, e *entry, apply func(*confedit.Object) error) *saveError {
	lookup, err := r.lookupCred(e.creds)
	if err != nil {
		return configErr(err)
	}
	old, err := confedit.ReadFile(path)
	if err != nil {
		return configErr(err)
	}
	doc, err := confedit.ParseObject(old)
	if err != nil {
		return configErr(fmt.Errorf("%s: %w", path, err))
	}
	if err := apply(doc); err != nil {
		return usageErr(err)
	}
	data, _ := doc.MarshalJSON()
	cfg, err := config.Parse(data, path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
	if err != nil {
		return configErr(err)
	}
	if r.edit.noVerify {
		fmt.Fprintf(r.env.Stderr, "warning: server %q saved without checking that it starts (--no-verify)\n", e.name)
		return nil
	}
	return r.probe(cfg, e.name)
}

// write saves e: its credentials to creds.json, then apply to the file at
// path under its lock; then it removes the credentials in drop. When the
// file cannot be written, the credentials are put back as they were.
func (r *run) write(path string, e *entry, apply func(*confedit.Object) error, drop []string) *saveError {
	cpath, err := r.credsPath()
	if err != nil {
		return configErr(err)
	}
	r.sweepCreds(cpath)
	undo := func() error { return nil }
	if len(e.creds) > 0 {
		// A name another server's value has is not replaced: e's takes
		// another (config.FreeCredName), chosen under creds.json's lock;
		// a credential of the server edited, no other's, is.
		var placed map[string]string
		placed, undo, err = creds.Place(cpath, e.creds, func(want, value string, taken func(string) (string, bool)) string {
			if e.own[want] {
				return want // the server's own, which it replaces
			}
			return config.FreeCredName(e.name, want, value, taken)
		})
		if err != nil {
			return configErr(err)
		}
		if err := e.rename(placed); err != nil {
			undo() //nolint:errcheck // best effort: the error reported is the rename's
			return configErr(err)
		}
	}
	err = confedit.Edit(path, nil, apply) // again, under the lock: another writer may have been first
	if err != nil {
		undo() //nolint:errcheck // best effort: the error reported is the file's
		return configErr(err)
	}
	creds.Saved(cpath)
	if len(drop) > 0 {
		if err := creds.Update(cpath, nil, drop); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: credentials no longer used stay in creds.json: %s\n", launcher.Escape(err.Error()))
		}
	}
	return nil
}

// done reports a change that was written.
func (r *run) done(msg, name, path string, credentials []string) int {
	if r.json {
		return r.printJSON(map[string]any{"server": name, "file": path, "credentials": credentials})
	}
	fmt.Fprintf(r.env.Stdout, "%s\n", launcher.Escape(msg))
	for _, c := range credentials {
		fmt.Fprintf(r.env.Stdout, "  credential %s kept in creds.json\n", launcher.Escape(c))
	}
	return ExitOK
}

// verify connects to cfg's server name alone and discovers it, unless
// --no-verify. It reports a failure (exit 3) and returns its exit code.
func (r *run) verify(cfg *config.Config, name string) int {
	if cfg.Server(name) == nil {
		return r.usagef("no server %q", name)
	}
	if r.edit.noVerify {
		fmt.Fprintf(r.env.Stderr, "warning: server %q saved without checking that it starts (--no-verify)\n", name)
		r.approveLaunch(cfg, name)
		return ExitOK
	}
	if se := r.probe(cfg, name); se != nil {
		return r.reportSave(se)
	}
	return ExitOK
}

// probe is checkServer for a change that was not written.
func (r *run) probe(cfg *config.Config, name string) *saveError {
	return r.checkServer(cfg, name, "nothing was written")
}

// checkServer connects to cfg's server name alone and discovers it, with
// progress on stderr: nil when it works, else what failed (exit 3, or the
// signal's when interrupted); written says what became of the change on
// failure ("nothing was written").
func (r *run) checkServer(cfg *config.Config, name, written string) *saveError {
	s := cfg.Server(name)
	if s == nil {
		return usageErr(fmt.Errorf("no server %q", name))
	}
	if s.Unusable != nil {
		return &saveError{ExitUpstream, failure{Code: codeConfig, Message: s.Unusable.Error(), Server: name},
			[]string{written + "; set what is missing, or save anyway with --no-verify"}}
	}
	one := *cfg
	sc := *s
	sc.Enabled = true
	one.Servers = []*config.Server{&sc}
	fmt.Fprintf(r.env.Stderr, "checking server %q...\n", name)
	// The person adding or editing the server approves its launch.
	opts := &host.Options{ClientVersion: r.env.Version, StopTimeout: oneShotStop, OAuth: r.oauthOptions(),
		LeftoverDir: r.leftoverDir(), ApproveLaunches: []string{name}}
	r.sandboxOptions(opts)
	if kept, err := r.openStore(cfg); err == nil {
		// What the check discovers is the server's catalogue: the next
		// command lists its tools without starting it.
		defer kept.Close()
		hostlink.WithStore(opts, store.Store(checkStore{kept}))
	} else {
		// The check alone, which keeps nothing and serves no tool:
		// nothing of its is approved.
		opts.Ephemeral = true
		sc.Lifecycle.Approval = config.ApprovalAuto
	}
	h, err := host.Open(r.ctx, &one, opts)
	if err != nil {
		return &saveError{ExitUpstream, failureOf(err, codeError), []string{written}}
	}
	st := h.Servers()[0]
	h.Close()
	if needsLogin(st) {
		// It answered, and asked for a login: the grant is the person's to give.
		fmt.Fprintf(r.env.Stderr, "server %q answers and asks for a login: run 'switchboard login %s'\n", name, launcher.Escape(name))
		return nil
	}
	if st.State != host.StateReady && st.State != host.StateIdle {
		msg := st.LastError
		if msg == "" {
			msg = fmt.Sprintf("server %q is %s", name, st.State)
		}
		advice := []string{written + "; fix it and try again, or save anyway with --no-verify"}
		if st.Stderr != "" {
			advice = append(advice, "its stderr ends:", oneLine(st.Stderr, 400))
		}
		if code, ok := r.interrupted(); ok {
			return &saveError{code, failure{Code: codeInterrupted, Message: "interrupted"}, advice[:1]}
		}
		return &saveError{ExitUpstream, failure{Code: "unavailable", Message: msg, Server: name}, advice}
	}
	fmt.Fprintf(r.env.Stderr, "server %q works: %s, %d tools, %d resources, %d prompts\n", name, orDash(st.ProtocolVersion), st.Tools, st.Resources, st.Prompts)
	return nil
}

// approveLaunch pins the launch of cfg's server name as the person saving
// it without a check approves it (docs/PINS.md); a store that cannot be
// opened keeps nothing, and the server is held at its next start.
func (r *run) approveLaunch(cfg *config.Config, name string) {
	sc := cfg.Server(name)
	l := sc.Launch()
	if l == nil {
		return
	}
	st, err := r.openStore(cfg)
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "warning: the launch of server %q is not approved (%v): approve it with 'switchboard approve %s'\n", name, err, launcher.Escape(name))
		return
	}
	defer st.Close()
	if err := state.ApproveLaunch(r.ctx, st, name, l.Definition()); err != nil {
		fmt.Fprintf(r.env.Stderr, "warning: the launch of server %q is not approved (%v): approve it with 'switchboard approve %s'\n", name, err, launcher.Escape(name))
	}
}

// checkStore is the state store as a check's host sees it: the catalogue
// the check discovers is saved, and its definitions approved, as at the
// server's first start; no saved catalogue is read, so that the server is
// started and discovered whatever an earlier run saved; no start-up
// schedule is read or kept, so that a failed check holds back neither the
// next check nor the next command.
type checkStore struct{ store.Store }

func (checkStore) Catalog(context.Context, string) (*store.Catalog, error) {
	return nil, store.ErrNotFound
}

func (checkStore) Schedule(context.Context, string) (*store.Schedule, error) {
	return nil, store.ErrNotFound
}
func (checkStore) SaveSchedule(context.Context, *store.Schedule) error { return nil }
func (checkStore) DeleteSchedule(context.Context, string) error        { return nil }

// checkServers reports the enabled servers that do not work (servers
// --check): exit 3 when there is one.
func (r *run) checkServers(servers []host.ServerStatus) int {
	bad := 0
	for _, s := range servers {
		switch s.State {
		case host.StateReady, host.StateIdle, host.StateDisabled:
			continue
		}
		bad++
		fmt.Fprintf(r.env.Stderr, "switchboard: server %q is %s: %s\n", s.Name, s.State, launcher.Escape(firstLine(s.LastError)))
	}
	if bad > 0 {
		return ExitUpstream
	}
	return ExitOK
}
