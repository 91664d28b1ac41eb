package cli

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/ui"
)

// serveControl puts the control API and the status page behind serve's
// front door, and writes the home's control.RuntimeFile (where ln
// listens) so that the CLI's commands find the gateway. The returned
// function removes the file.
func (r *server) serveControl(front *frontdoor.Options, ln net.Listener, log *slog.Logger) (stop func()) {
	source := r.configInUse() // read once: a reload keeps the file in use
	sync := func() {
		if g := r.gateway.Load(); g != nil {
			g.Sync()
		}
	}
	ctl := control.New(control.Options{Host: r.host, Store: r.store, EditServer: r.editServer, Source: func() string { return source }, Changed: sync})
	p := front.Path
	if p+"/" == frontdoor.APIPrefix || strings.HasPrefix(p, frontdoor.APIPrefix) || p == frontdoor.UIPath || strings.HasPrefix(p, frontdoor.UIPath+"/") {
		// --path took their place: the MCP endpoint keeps it, and the CLI
		// is not told of a gateway it could not ask.
		log.Warn("the control API and the status page are off: --path is under "+frontdoor.APIPrefix+" or "+frontdoor.UIPath, "path", p)
		return func() {}
	}
	front.API = ctl.Handler() // whether or not the page is: the CLI asks it
	if page, err := ui.New(ui.Options{Control: ctl, Logger: log}); err != nil {
		log.Warn("the status page is off", "err", err)
	} else {
		front.UI = page
		if g := r.gateway.Load(); g != nil {
			// Where a client's URL elicitation sends the person who
			// decides on a held call.
			g.SetApprovalPage("http://" + dialable(ln.Addr()) + ui.Path + "/approvals/")
		}
		// The page's event streams end when the drain starts: they are
		// not calls to wait for.
		context.AfterFunc(r.ctx, page.Close)
	}
	home, err := r.homeDir()
	if err != nil {
		return func() {}
	}
	remove, err := control.WriteRuntime(home, control.Runtime{
		URL: "http://" + dialable(ln.Addr()), PID: os.Getpid(), TokenFile: r.serve.tokenFile, TokenEnv: r.serve.tokenEnv,
		NoAuth: r.serve.noAuth, Config: source, Started: time.Now(),
	})
	if err != nil {
		log.Warn("the CLI will not find this gateway: its runtime file was not written", "err", err)
		return func() {}
	}
	return remove
}

// dialable is a listener's address as a client on this machine dials it:
// an unspecified address (every interface) becomes loopback.
func dialable(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}
