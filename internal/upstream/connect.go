package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/era"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
)

func (c *Conn) connect(ctx context.Context) error {
	switch c.server.Transport {
	case config.TransportStdio:
		return c.connectStdio(ctx)
	case config.TransportHTTP:
		if err := c.checkURL(); err != nil {
			return err
		}
		return c.connectHTTP(ctx, c.streamableTransport(), c.server.ProtocolVersion)
	case config.TransportSSE:
		if err := c.checkURL(); err != nil {
			return err
		}
		// Legacy HTTP+SSE servers predate server/discover: go straight to
		// initialize (the server negotiates down to its version), with the
		// pinned version if there is one (config allows only legacy ones).
		version := c.server.ProtocolVersion
		if version == "" {
			version = era.LatestLegacy
		}
		return c.connectHTTP(ctx, captureTransport{onLog: c.wireLog, Transport: &mcp.SSEClientTransport{
			Endpoint:     c.server.URL,
			HTTPClient:   c.httpClient(),
			MaxEventSize: c.opts.MaxFrame,
		}}, version)
	}
	return fmt.Errorf("unknown transport %q", c.server.Transport)
}

// connectStdio starts the process on the handshake of the server's era.
// Pinned to a modern version, it sends server/discover and nothing else;
// pinned to a legacy version, initialize with it. Unpinned, it probes the
// 2026-07-28 era first, which ties a server's questions to the call that
// asks them and carries multi-round-trip input requests through to
// 2026-07-28 clients (a legacy stdio server's questions name no call). A
// server that does not answer the probe in time falls back to initialize
// on the same process (captureTransport answers the probe itself); one
// that dies on it, or refuses it, is restarted on the legacy handshake.
// The legacy era costs less per call (no per-request _meta): pin it with
// "protocolVersion" where that matters more, or where a server asks its
// questions only the legacy way.
func (c *Conn) connectStdio(ctx context.Context) error {
	switch v := c.server.ProtocolVersion; {
	case era.Modern(v):
		return c.startStdio(ctx, handshake{version: v, modernOnly: true})
	case v != "":
		return c.startStdio(ctx, handshake{version: v})
	}
	probe := c.opts.ProbeTimeout
	if half := c.server.StartupTimeout / 2; probe > half {
		probe = half
	}
	err := c.startStdio(ctx, handshake{probe: probe})
	if err == nil || ctx.Err() != nil || cannotLaunch(err) {
		return err
	}
	c.log.Debug("modern handshake failed; restarting on the legacy handshake", "err", err)
	return c.startStdio(ctx, handshake{version: era.LatestLegacy})
}

// handshake says how startStdio connects: version is the protocol version
// asked for ("" means go-sdk's latest, the modern one); probe, when
// positive, bounds the server/discover probe; modernOnly forbids the
// fallback to initialize.
type handshake struct {
	version    string
	probe      time.Duration
	modernOnly bool
}

func (c *Conn) startStdio(ctx context.Context, h handshake) error {
	p, err := launcher.Start(launcher.Spec{
		Server:          c.server.Name,
		Command:         c.server.Command,
		Args:            c.server.Args,
		Env:             c.server.Env,
		Dir:             c.server.Cwd,
		Runtime:         c.server.Runtime,
		MaxFrame:        c.opts.MaxFrame,
		StopStage:       c.opts.StopStage,
		LeftoverDir:     c.opts.LeftoverDir,
		Sandbox:         sandboxSettings(c.server),
		SwitchboardHome: c.opts.SwitchboardHome,
		CacheDir:        c.opts.SandboxCacheDir,
		Upgrade:         c.opts.RanBefore != nil && c.opts.RanBefore(c.server.Name),
		Logger:          c.log,
		FrameFilter:     c.pruneFrame,
		Mask:            c.mask,
	})
	if err != nil {
		return err
	}
	var sessOpts *mcp.ClientSessionOptions
	if h.version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: h.version}
	}
	var established atomic.Bool
	t := captureTransport{Transport: p.Transport(), probe: h.probe, modernOnly: h.modernOnly, established: &established, abort: func() { p.Abort() }, onLog: c.wireLog}
	cs, err := c.newClient().Connect(ctx, t, sessOpts)
	established.Store(err == nil)
	if err != nil {
		exited := exitedAlone(p, err)
		p.Abort() // it never completed the handshake: no grace period
		if f := p.Fault(); f != nil {
			err = f
		} else if exited != "" {
			err = fmt.Errorf("%w (the server exited: %s)", err, exited)
		}
		return withStderr(err, p.StderrTail())
	}
	c.proc = p
	c.setSession(cs)
	return nil
}

// sandboxSettings turns a stdio server's "sandbox" into the launcher's
// settings, with the mode its trust gives it.
func sandboxSettings(s *config.Server) *sandbox.Settings {
	mode := s.SandboxMode()
	if mode == "" {
		return nil
	}
	st := &sandbox.Settings{Mode: sandbox.Mode(mode), Read: s.Sandbox.Read, Write: s.Sandbox.Write,
		MemoryMB: s.Sandbox.MemoryMB, Processes: s.Sandbox.Processes, CPU: s.Sandbox.CPU,
		Explicit: s.Sandbox.Mode != ""}
	if n := s.Sandbox.Network; n != nil {
		st.Network = &sandbox.Network{Off: n.Off, Ports: n.Ports}
	}
	return st
}

// exitReadGrace bounds how long a failed handshake waits for the child
// to be reaped and its stdout read to the end, so that its exit status
// and banner go into the error. A child that exits on its own is reaped
// at once; the bound is reached only when it lingers or a descendant
// holds its stdout, and is seconds so that a busy machine still reads a
// banner in time.
const exitReadGrace = 5 * time.Second

// exitedAlone says how the child ended ("exit status 1") when the
// handshake failed because its stdout ended, which a child does as it
// exits; "" otherwise (after other failures the connection's close stops
// the child, and its status says nothing about the server).
func exitedAlone(p *launcher.Process, err error) string {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.EPIPE) {
		return "" // not a server gone: EOF on its stdout, or its stdin closed under a write
	}
	timeout := time.After(exitReadGrace)
	select {
	case <-p.Done():
	case <-timeout:
		return ""
	}
	// What it wrote before it went (a banner) is read before the tail is.
	select {
	case <-p.StdoutEnded():
	case <-timeout:
	}
	return p.ExitStatus()
}

// connectHTTP connects over an HTTP transport. The session is bound to the
// connection's lifetime, not to ctx: go-sdk's SSE transport ties its
// hanging GET to the context given to Connect, so ctx's deadline is
// enforced here by cancelling a context derived from the lifetime.
func (c *Conn) connectHTTP(ctx context.Context, t mcp.Transport, version string) error {
	connectCtx, cancel := context.WithCancel(c.life)
	// The handshake's HTTP refusals (401 above all) are the dial's, and so
	// are the requests it sends (phase.go).
	connectCtx = context.WithValue(connectCtx, statusKey{}, ctx.Value(statusKey{}))
	connectCtx = context.WithValue(connectCtx, phaseKey{}, ctx.Value(phaseKey{}))
	stop := context.AfterFunc(ctx, cancel)
	var sessOpts *mcp.ClientSessionOptions
	if version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.newClient().Connect(connectCtx, t, sessOpts)
	if !stop() || err != nil {
		cancel()
		if cs != nil {
			cs.Close()
		}
		if err == nil || ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return err
	}
	// connectCtx now lives as long as c.life; cancel is left to Close.
	c.setSession(cs)
	return nil
}

func (c *Conn) setSession(cs *mcp.ClientSession) {
	c.session = cs
	r := cs.InitializeResult()
	c.info = Info{ProtocolVersion: r.ProtocolVersion, ServerInfo: r.ServerInfo, Capabilities: r.Capabilities, Instructions: r.Instructions}
	if c.info.Capabilities == nil {
		c.info.Capabilities = &mcp.ServerCapabilities{}
	}
}

func (c *Conn) streamableTransport() mcp.Transport {
	t := &mcp.StreamableClientTransport{
		Endpoint:     c.server.URL,
		HTTPClient:   c.httpClient(),
		MaxEventSize: c.opts.MaxFrame,
		// go-sdk resumes a broken SSE stream (Last-Event-ID, backoff) when
		// the server numbered its events; a few tries, then the connection
		// is broken and the caller redials.
		MaxRetries: 3,
	}
	if c.oauth != nil {
		t.OAuthHandler = c.oauth
	}
	return t
}

// roundTripper adds the configured headers and bounds response bodies. For
// Streamable HTTP it is also the capture point of raw results; legacy SSE
// results arrive on the GET stream and are captured at the Connection, so
// there the slot never reaches a POST and nothing is rewritten.
func (c *Conn) roundTripper() http.RoundTripper {
	h := http.Header{}
	for k, v := range c.server.Headers {
		h.Set(k, v)
	}
	next := c.baseTransport()
	if c.oauth != nil {
		next = c.oauth.Transport(next)
	}
	rt := &captureRoundTripper{
		next:    next,
		headers: h,
		maxBody: int64(c.opts.MaxFrame),
		server:  c.server.Name,
		prune:   c.pruneFrame,
	}
	return rt
}

// watch records why the session ended and closes done.
func (c *Conn) watch() {
	err := c.session.Wait()
	if c.proc != nil {
		c.proc.Stop()
		if f := c.proc.Fault(); f != nil {
			err = f
		} else if ee := c.proc.ExitErr(); ee != nil {
			err = ee
		}
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	c.closeTwin()
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// askForLogs asks a legacy server that logs to send everything: the
// gateway forwards its messages to each client, whose own level filters
// them (go-sdk's ServerSession.Log). A 2026-07-28 server is asked per
// request instead (see CallTool). Failure only costs the logs.
func (c *Conn) askForLogs(ctx context.Context) {
	if !c.opts.Forward || c.info.Capabilities.Logging == nil || c.modern() {
		return
	}
	//lint:ignore SA1019 logging is deprecated by SEP-2577 but still served and scored.
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		c.log.Debug("logging/setLevel refused", "err", err)
	}
}

// withStderr appends the server's stderr tail to a start-up error, since
// a server that failed to start usually said why there. The result is
// fault.Private: the tail is for the operator, never for a client.
func withStderr(err error, tail string) error {
	tail = strings.TrimSpace(tail)
	if tail == "" {
		return err
	}
	if len(tail) > 2048 {
		tail = "…" + tail[len(tail)-2048:]
	}
	return &fault.Private{Err: fmt.Errorf("%w\nstderr:\n%s", err, tail)}
}
