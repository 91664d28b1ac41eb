package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// defaultServeAddr is where `switchboard serve` listens without --http.
const defaultServeAddr = "127.0.0.1:8939"

// serveFlags are the flags of `switchboard serve`.
type serveFlags struct {
	stdio      bool
	path       string
	tokenEnv   string
	noAuth     bool
	allowHosts []string
	pageSize   int
	watch      bool
	pprof      string
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.stdio, "stdio", false, "serve on stdin/stdout, for clients that launch their servers")
	fs.BoolVar(&f.watch, "watch", false, "reload the configuration when its file changes (SIGHUP always reloads)")
	fs.StringVar(&f.path, "path", frontdoor.DefaultPath, "HTTP `path` of the MCP endpoint")
	fs.StringVar(&f.tokenEnv, "token-env", "", "read the bearer token from environment `variable` VAR (default: generate one)")
	fs.BoolVar(&f.noAuth, "no-auth", false, "accept requests without a token (dangerous)")
	fs.Func("allow-host", "also accept this `hostname` in Host and Origin (repeatable)", func(h string) error {
		f.allowHosts = append(f.allowHosts, h)
		return nil
	})
	fs.IntVar(&f.pageSize, "page-size", 0, "items per page of tools/list and the other lists (default go-sdk's 1000)")
	fs.StringVar(&f.pprof, "pprof", "", "serve Go's runtime profiles (net/http/pprof) on this loopback `address`, e.g. 127.0.0.1:6060")
}

// checkServe rejects contradictory serve flags before any server starts.
func checkServe(r *run) error {
	f := r.serve
	if f.pprof != "" && !loopback(f.pprof) {
		return fmt.Errorf("serve: --pprof %s: profiles are served on a loopback address only", f.pprof)
	}
	switch {
	case f.stdio && r.http != "":
		return errors.New("serve: choose --stdio or --http, not both")
	case f.pageSize < 0:
		return errors.New("serve: --page-size must be positive")
	case f.noAuth && f.tokenEnv != "":
		return errors.New("serve: --no-auth and --token-env contradict each other")
	case f.noAuth && len(f.allowHosts) > 0:
		return errors.New("serve: --no-auth with --allow-host would open every tool to the network; refusing")
	case f.tokenEnv != "":
		if tok, ok := r.env.LookupEnv(f.tokenEnv); !ok || tok == "" {
			return fmt.Errorf("serve: --token-env %s: the variable is not set", f.tokenEnv)
		}
	}
	return nil
}

func runServe(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	f := r.serve
	log := slog.New(slog.NewTextHandler(r.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if r.verbose {
		log = slog.New(slog.NewTextHandler(r.env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if set := tuneGC(r.env.LookupEnv); set != "" {
		log.Debug("garbage collector tuned for a long-running gateway", "settings", set)
	}
	if f.pprof != "" {
		bound, stop, err := servePprof(r.ctx, f.pprof, log)
		if err != nil {
			return r.usagef("serve: --pprof: %v", err)
		}
		defer stop()
		fmt.Fprintf(r.env.Stderr, "switchboard: runtime profiles at http://%s/debug/pprof/\n", bound)
	}
	g := gateway.New(r.host, &gateway.Options{Version: r.env.Version, PageSize: f.pageSize, Logger: log, OnConfirm: r.cfg.Policy.OnConfirm})
	r.gateway.Store(g)
	var reloads sync.WaitGroup
	rctx, stopReloads := context.WithCancel(r.ctx)
	reloads.Go(func() { r.watchReload(rctx, log) })
	defer func() {
		stopReloads()
		reloads.Wait()
	}()
	if f.stdio {
		// stdout carries the protocol: everything else goes to stderr.
		fmt.Fprintf(r.env.Stderr, "switchboard: serving %s on stdio\n", summary(r.host))
		if err := g.ServeStdio(r.ctx); err != nil {
			return r.failf(ExitUpstream, codeError, "serve: %v", err)
		}
		return ExitOK
	}
	addr := r.http
	if addr == "" {
		addr = defaultServeAddr
	}
	front := frontdoor.Options{Path: f.path, NoAuth: f.noAuth, AllowedHosts: f.allowHosts, Logger: log}
	tokenSource := ""
	switch { // checkServe has rejected the contradictions
	case f.noAuth:
		fmt.Fprintln(r.env.Stderr, frontdoor.NoAuthWarning)
	case f.tokenEnv != "":
		front.Token, _ = r.env.LookupEnv(f.tokenEnv)
		tokenSource = "$" + f.tokenEnv
	default:
		tok, err := frontdoor.GenerateToken()
		if err != nil {
			return r.failf(ExitUpstream, codeError, "serve: generating a token: %v", err)
		}
		front.Token = tok
	}
	if !loopback(addr) {
		fmt.Fprintf(r.env.Stderr, "warning: %s is not a loopback address: the gateway is reachable from other machines\n", addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(r.ctx, "tcp", addr)
	if err != nil {
		return r.usagef("serve: %v (is another switchboard running? choose another port with --http)", err)
	}
	ready := func(a net.Addr) {
		r.banner(a.String(), f.path, front, tokenSource)
	}
	if err := g.ServeHTTP(r.ctx, ln, gateway.HTTPOptions{Front: front, Ready: ready}); err != nil {
		return r.failf(ExitUpstream, codeError, "serve: %v", err)
	}
	fmt.Fprintln(r.env.Stderr, "switchboard: stopped")
	return ExitOK
}

// gcPercent and gcMemoryLimit are the garbage collector's settings for a
// running gateway. Most of what a call allocates is garbage at once (go-sdk
// decodes each message through a fresh 32 KiB buffer), while the live heap
// stays small (tens of MB), so the default GOGC=100 collects about a
// hundred times a second under load and spends half the gateway's CPU
// doing it. With 400 the heap may grow to five times what is live before a
// collection, which halves the gateway's CPU per call at 16 callers
// (docs/PERFORMANCE.md); the soft limit bounds that growth should the live
// heap ever be large.
const (
	gcPercent     = 400
	gcMemoryLimit = 512 << 20
)

// tuneGC applies gcPercent and gcMemoryLimit, unless the environment sets
// GOGC or GOMEMLIMIT (then the operator's choice stands). It returns what
// it set, or "".
func tuneGC(lookup func(string) (string, bool)) string {
	if _, ok := lookup("GOGC"); ok {
		return ""
	}
	if _, ok := lookup("GOMEMLIMIT"); ok {
		return ""
	}
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(gcMemoryLimit)
	return fmt.Sprintf("GOGC=%d GOMEMLIMIT=%dMiB", gcPercent, gcMemoryLimit>>20)
}

// banner tells a person how to connect their clients.
func (r *run) banner(addr, path string, front frontdoor.Options, tokenSource string) {
	w := r.env.Stderr
	url := "http://" + addr + path
	fmt.Fprintf(w, "switchboard: serving %s\n  endpoint: %s   (health: http://%s%s)\n", summary(r.host), url, addr, frontdoor.HealthPath)
	auth := ""
	switch {
	case front.NoAuth:
		fmt.Fprintf(w, "  token:    none (--no-auth)\n")
	case tokenSource != "":
		fmt.Fprintf(w, "  token:    from %s\n", tokenSource)
		auth = "Bearer " + tokenSource
	default:
		fmt.Fprintf(w, "  token:    generated for this run (use --token-env VAR to choose one): %s\n", front.Token)
		auth = "Bearer " + front.Token
	}
	fmt.Fprintf(w, "\nClaude Code:\n  claude mcp add --transport http switchboard %s", url)
	if auth != "" {
		fmt.Fprintf(w, " --header \"Authorization: %s\"", auth)
	}
	fmt.Fprintln(w)
	headers := ""
	if auth != "" {
		headers = fmt.Sprintf(`, "headers": {"Authorization": %q}`, auth)
	}
	fmt.Fprintf(w, "\nCursor and other clients (mcp.json):\n  {\"mcpServers\": {\"switchboard\": {\"url\": %q%s}}}\n", url, headers)
	exe := r.env.Executable
	if exe == "" {
		exe = "switchboard"
	}
	fmt.Fprintf(w, "\nClaude Desktop (claude_desktop_config.json) launches it over stdio instead:\n  {\"mcpServers\": {\"switchboard\": {\"command\": %s, \"args\": [\"serve\", \"--stdio\"]}}}\n\n",
		strconv.Quote(exe))
}

// summary says what the gateway serves, e.g. "2 servers (1 ready), 13
// tools listed (4 deferred), 5 built-in".
func summary(h *host.Host) string {
	servers := h.Servers()
	ready := 0
	for _, s := range servers {
		if s.State == host.StateReady {
			ready++
		}
	}
	plural := "s"
	if len(servers) == 1 {
		plural = ""
	}
	deferred := 0
	for _, t := range h.Tools() {
		if t.Deferred {
			deferred++
		}
	}
	listed, builtin := 0, 0
	for _, t := range h.ModelTools() {
		if t.Server == "" {
			builtin++
		} else {
			listed++
		}
	}
	out := fmt.Sprintf("%d server%s (%d ready), %d tools listed", len(servers), plural, ready, listed)
	if deferred > 0 {
		out += fmt.Sprintf(" (%d more deferred: %s finds them)", deferred, host.ToolSearch)
	}
	if builtin > 0 {
		out += fmt.Sprintf(", %d built-in", builtin)
	}
	return out
}

// loopback reports whether addr's host is a loopback name or address.
func loopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}
