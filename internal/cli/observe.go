package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
)

// What `serve` gives its operator: a log line per call and the servers'
// exits and restarts (at info level; --log-format json|text), metrics at
// /metrics on the HTTP listener, and traces when the OTEL_* environment
// asks for them.

// The values of serve --log-format.
const (
	logText = "text"
	logJSON = "json"
)

// serveLogger is serve's log, in the format --log-format names, at level
// (debug with --verbose).
func serveLogger(w io.Writer, format string, level slog.Level, verbose bool) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if verbose {
		opts.Level = slog.LevelDebug
	}
	if format == logJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// observer is what serve watches: its log, metrics and tracing, set up
// before the host opens (a server's events may come while it does).
type observer struct {
	// log is at info level: a line per call, servers' restarts. quiet is
	// the host's, the gateway's and the front door's: warn level (what goes
	// wrong with a server, a server's exit, findings of warn severity or
	// above), for go-sdk logs every HTTP request's session at info, and the
	// host its findings of info severity.
	log, quiet *slog.Logger
	metrics    *telemetry.Metrics
	tracing    *telemetry.Tracing // nil when tracing is off
	host       liveHost
}

// liveHost is the host the metrics read at each scrape, once it is open.
type liveHost struct{ h atomic.Pointer[host.Host] }

func (l *liveHost) Servers() []host.ServerStatus {
	if h := l.h.Load(); h != nil {
		return h.Servers()
	}
	return nil
}

func (l *liveHost) CallsInFlight() map[string]int {
	if h := l.h.Load(); h != nil {
		return hostlink.Of(h).CallsInFlight()
	}
	return nil
}

func (l *liveHost) SpillBytes() int {
	if h := l.h.Load(); h != nil {
		return hostlink.Of(h).SpillBytes()
	}
	return 0
}

func (l *liveHost) StoreUp() bool {
	if h := l.h.Load(); h != nil {
		return hostlink.Of(h).StoreUp()
	}
	return true
}

func (l *liveHost) AuditStats() hostlink.AuditStats {
	if h := l.h.Load(); h != nil {
		return hostlink.Of(h).AuditStats()
	}
	return hostlink.AuditStats{}
}

// newObserver sets up serve's observer and hooks it into opts.
func (r *server) newObserver(opts *host.Options) (*observer, error) {
	o := &observer{
		log:   serveLogger(r.env.Stderr, r.serve.logFormat, slog.LevelInfo, r.verbose),
		quiet: serveLogger(r.env.Stderr, r.serve.logFormat, slog.LevelWarn, r.verbose),
	}
	o.metrics = telemetry.NewMetrics(&o.host)
	tr, err := telemetry.NewTracing(r.ctx, r.env.LookupEnv, r.env.Version)
	if err != nil {
		return nil, fmt.Errorf("serve: tracing: %v", err)
	}
	o.tracing = tr
	opts.Logger = o.quiet
	opts.OnCall = o.call
	opts.OnEvent = o.event
	if tr != nil {
		opts.TracerProvider = tr.Provider
	}
	return o, nil
}

// call counts a call and logs its line.
func (o *observer) call(rec host.CallRecord) {
	o.metrics.Call(rec)
	telemetry.LogCall(o.log, rec)
}

// event counts a server's event, and logs a restart (the host logs an
// exit, with its status, as a warning).
func (o *observer) event(ev host.ServerEvent) {
	o.metrics.Event(ev)
	if ev.Kind == host.EventRestarted {
		o.log.Info("server restarted", "server", ev.Server)
	}
}

// close sends the spans still queued.
func (o *observer) close() {
	if o == nil || o.tracing == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.tracing.Shutdown(ctx); err != nil {
		o.log.Warn("traces not sent", "err", err)
	}
}
