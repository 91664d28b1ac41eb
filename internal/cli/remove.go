package cli

import (
	"fmt"
	"slices"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func removeCommand(r *run) *command {
	return &command{
		name: "remove", args: "NAME",
		summary:  "remove a server (and the credentials and OAuth grants only it used)",
		examples: []string{"switchboard remove files"},
		flags:    r.edit.scopeFlag,
		run:      runRemove,
		complete: firstServer,
	}
}

// runRemove removes a server and the credentials only it referenced.
func runRemove(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	name := r.args[0]
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	// An HTTP server's OAuth grants go with it, unless another server
	// names the same resource.
	var resource string
	if cfg, err := r.loadConfig(); err == nil {
		if sc := cfg.Server(name); sc != nil && sc.Transport == config.TransportHTTP && sc.URL != "" {
			resource = sc.URL
			for _, other := range cfg.Servers {
				if other.Name != name && other.URL == sc.URL {
					resource = ""
				}
			}
		}
	}
	var gone []string
	err = confedit.Edit(path, &confedit.Options{Check: r.checkFile(path)}, func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			raw, ok := servers.Get(name)
			if !ok {
				return errNoServer(name, path, servers)
			}
			servers.Delete(name)
			for _, m := range credRefs.FindAllStringSubmatch(string(raw), -1) {
				gone = append(gone, m[1])
			}
			// A credential another server references stays.
			rest, _ := servers.MarshalJSON()
			still := map[string]bool{}
			for _, m := range credRefs.FindAllStringSubmatch(string(rest), -1) {
				still[m[1]] = true
			}
			gone = slices.DeleteFunc(gone, func(c string) bool { return still[c] })
			return nil
		})
	})
	if err != nil {
		return r.editError(err)
	}
	if cpath, err := r.credsPath(); err == nil {
		r.sweepCreds(cpath)
		if len(gone) > 0 {
			if err := creds.Update(cpath, nil, gone); err != nil {
				fmt.Fprintf(r.env.Stderr, "warning: the server's credentials stay in creds.json: %s\n", launcher.Escape(err.Error()))
			}
		}
		if resource != "" {
			if _, err := creds.ForgetTokens(cpath, resource); err != nil {
				fmt.Fprintf(r.env.Stderr, "warning: the server's OAuth grants stay in creds.json: %s\n", launcher.Escape(err.Error()))
			}
		}
	}
	return r.done(fmt.Sprintf("removed server %q from %s", name, path), name, path, nil)
}
