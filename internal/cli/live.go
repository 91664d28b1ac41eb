package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// The commands that act on a running gateway, those whose constructor
// sets live (servers and list, log, approve, restart), ask the gateway
// that serves the same home (its control API, found through the home's
// control.RuntimeFile) when one runs, and show its state; otherwise they
// work as before, on a host or store of their own (restart needs a
// gateway).

// viaGateway runs the command against the gateway running for the home,
// when there is one and the command's flags do not ask for this process's
// own host; ok is false when the command should run as usual.
func (r *run) viaGateway() (code int, ok bool) {
	if r.cmd.live == nil || r.storeURL != "" {
		return 0, false
	}
	live := r.cmd.live()
	if live == nil {
		return 0, false
	}
	home, err := r.homeDir()
	if err != nil {
		return 0, false
	}
	c, rt, err := control.Find(r.ctx, home, r.env.LookupEnv)
	switch {
	case errors.Is(err, control.ErrNoGateway):
		return 0, false
	case err != nil:
		fmt.Fprintf(r.env.Stderr, "warning: %s; showing this process's view instead\n", launcher.Escape(err.Error()))
		return 0, false
	case r.cfgFile != "" && rt.Config != absPath(r.cfgFile):
		return 0, false // the gateway serves another configuration
	}
	if r.verbose {
		fmt.Fprintf(r.env.Stderr, "switchboard: asking the gateway at %s (pid %d)\n", c.Base(), rt.PID)
	}
	return live(r, c), true
}

// liveFunc is a command's way of running against a running gateway.
type liveFunc = func(r *run, c *control.Client) int

// serverEdit is a server's object of the configuration file being edited
// for the control API.
type serverEdit struct{ obj *confedit.Object }

func (e serverEdit) SetEnabled(on bool) error {
	setEnabled(e.obj, on)
	return nil
}

func (e serverEdit) DisableTool(tool string) error {
	var tools []string
	if raw, ok := e.obj.Get("disabledTools"); ok {
		if err := json.Unmarshal(raw, &tools); err != nil {
			return fmt.Errorf("disabledTools: %v", err)
		}
	}
	for _, t := range tools {
		if t == tool {
			return nil
		}
	}
	return e.obj.SetValue("disabledTools", append(tools, tool))
}

// reloadWait bounds how long an edit of the control API waits for the
// reload that takes it.
const reloadWait = 30 * time.Second

// editServer is control.Options.EditServer for serve: the server's object
// in the configuration file edited through confedit (checked before it is
// written), then the configuration reloaded at once.
func (r *server) editServer(ctx context.Context, name string, edit func(control.ServerEdit) error) error {
	path, err := r.editPath()
	if err != nil {
		return err
	}
	err = confedit.Edit(path, &confedit.Options{Check: r.checkFile(path)}, func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			if _, ok := servers.Get(name); !ok {
				return errNoServer(name, path, servers)
			}
			obj, err := servers.Object(name)
			if err != nil {
				return err
			}
			if err := edit(serverEdit{obj}); err != nil {
				return err
			}
			return servers.SetValue(name, obj)
		})
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	select {
	case r.reloadAsk <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(reloadWait):
		return errors.New("the configuration was written; its reload is still under way")
	}
}
