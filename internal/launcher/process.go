//go:build unix

package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
)

// A Process is one server subprocess, from [Start] until [Process.Stop] has
// returned. It owns the child, the child's process group, the three pipes
// and the three goroutines that watch them:
//
//   - reap waits for the direct child, SIGKILLs what is left of its group,
//     reaps it and closes Done;
//   - pumpStderr copies stderr into the bounded tail until EOF;
//   - supervise waits for a stop request (Stop, the transport's Close, or a
//     fault) and runs the stop sequence.
//
// Stop waits for all three (reap only up to the last stop stage: a child the
// kernel will not release even after SIGKILL cannot be waited for).
// Callers must call Stop, or close the connection made with Transport,
// even after the child exited on its own: that is what releases the pipes.
type Process struct {
	// Fixed at Start.
	spec    Spec // with defaults applied
	cmd     *exec.Cmd
	pid     int      // also the process group ID (Setpgid)
	stdin   *os.File // our (write) end of the child's stdin
	stdout  *os.File // our (read) end of the child's stdout
	stderr  *os.File // our (read) end of the child's stderr
	guard   *frameGuard
	tail    *ring
	release func()       // ends the forker reservation; called once, after the reap
	shim    *shim        // the child is the server's shim; nil when it is the server
	conf    *confinement // the server's sandbox; nil without one

	done chan struct{} // closed by reap once the direct child is reaped
	// stdoutEnd is closed once the connection's reader has seen stdout
	// end (or fail): every stray line before the end is in the tail.
	stdoutEnd  chan struct{}
	stdoutOnce sync.Once
	pumpDone   chan struct{} // closed by pumpStderr when it returns
	stopReq    chan struct{} // closed by requestStop to start the stop sequence
	stopped    chan struct{} // closed by supervise when the stop sequence is over
	stopOnce   sync.Once     // guards close(stopReq)
	stopErr    error         // written by supervise before close(stopped)

	connected atomic.Bool // Transport().Connect has been called
	writeMu   sync.Mutex  // one frame at a time on stdin (go-sdk's writes and WriteFrame)
	abort     atomic.Bool // skip the grace of stage 1 (see Abort)

	// tailMu guards the stderr tail as StderrTail last made it: escaped
	// and masked, for the tail's first tailAt bytes ever written. Masking
	// 64 KiB takes milliseconds, and status is read far more often than
	// a quiet server writes. Lock order: tailMu before the ring's lock.
	tailMu   sync.Mutex
	tailAt   int64
	tailText string

	mu      sync.Mutex     // guards the fields below
	reaped  bool           // the child is reaped: its group ID may be reused, never signal it
	exitErr error          // how the server ended; set when reaped
	status  string         // how the server ended, worded as os.ProcessState does; set when reaped
	fault   error          // first fault found by the launcher (ErrFrameTooLarge)
	limits  sandbox.Events // what the sandbox's limits did; set when reaped
	strays  int            // stdout lines that were not JSON-RPC (see stray.go)
	// straySample is the start of the first such line, raw.
	straySample string
}

// Start launches spec's command and returns once the child is running. The
// child's lifetime belongs to the returned Process, not to any context:
// stop it with [Process.Stop] or by closing the connection made with
// [Process.Transport]. Errors are *StartError.
func Start(spec Spec) (*Process, error) {
	spec = spec.withDefaults()
	fail := func(err error) *StartError {
		return &StartError{Server: spec.Server, Program: spec.Command, Err: err}
	}
	if spec.Command == "" {
		return nil, fail(errors.New("no command configured"))
	}
	if err := validateEnv(spec.Env); err != nil {
		return nil, fail(err)
	}
	if spec.Dir != "" {
		// Checked here because a failed chdir in the child is reported by
		// os/exec as "fork/exec <program>: no such file or directory",
		// which reads as if the program were missing.
		if fi, err := os.Stat(spec.Dir); err != nil {
			return nil, fail(fmt.Errorf("working directory: %w", err))
		} else if !fi.IsDir() {
			return nil, fail(fmt.Errorf("working directory %s is not a directory", spec.Dir))
		}
	}
	env := ChildEnv(spec.LookupEnv, spec.Env)

	// Look the program up where the child would: in its own PATH, which a
	// server's "env" may have changed.
	searchPath, ok := envValue(env, "PATH")
	if !ok {
		searchPath, _ = spec.LookupEnv("PATH")
	}
	path, err := lookPath(spec.Command, searchPath, spec.Dir)
	if err != nil {
		e := fail(err)
		if !strings.Contains(spec.Command, "/") {
			e.PATH = searchPath
		}
		if rt, ok := commandRuntime[filepath.Base(spec.Command)]; ok && errors.Is(err, ErrProgramNotFound) {
			e.Err = &RuntimeError{Server: spec.Server, Runtime: rt, Program: spec.Command, PATH: e.PATH,
				Want: spec.Runtime[rt], Err: ErrRuntimeMissing}
		}
		return nil, e
	}
	if err := checkRuntimes(spec, path, env, searchPath); err != nil {
		return nil, fail(err)
	}
	conf, err := confine(spec, path, searchPath)
	if err != nil {
		return nil, fail(err)
	}
	if conf.enforced() && len(conf.env) > 0 {
		extra := maps.Clone(spec.Env)
		if extra == nil {
			extra = map[string]string{}
		}
		maps.Copy(extra, conf.env)
		env = ChildEnv(spec.LookupEnv, extra)
	}

	// Our own pipes rather than cmd.StdoutPipe and friends: all three child
	// ends are *os.File, so os/exec starts no copying goroutines and Wait
	// returns as soon as the child is reaped, whoever still holds a pipe.
	// We close our ends ourselves, at the end of the stop sequence.
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		conf.release()
		return nil, fail(err)
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		closeAll()
		conf.release()
		return nil, fail(err)
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		closeAll()
		conf.release()
		return nil, fail(err)
	}

	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{spec.Command}, spec.Args...),
		Env:         env,
		Dir:         spec.Dir,
		Stdin:       stdinR,
		Stdout:      stdoutW,
		Stderr:      stderrW,
		SysProcAttr: sysProcAttr(),
		// A backstop only: with *os.File stdio there is no I/O for Wait to
		// wait for. Should that ever change, a grandchild holding a pipe
		// open delays Wait by at most one stop stage.
		WaitDelay: spec.StopStage,
	}
	cmd, sh, release, err := startServer(cmd, spec, conf)
	// The child has its copies (or failed to start); ours of its ends must
	// go, or we would never see EOF on stdout and stderr.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		closeAll()
		conf.release()
		return nil, fail(err)
	}

	p := &Process{
		spec:      spec,
		cmd:       cmd,
		pid:       cmd.Process.Pid,
		stdin:     stdinW,
		stdout:    stdoutR,
		stderr:    stderrR,
		tail:      newRing(spec.StderrLimit),
		release:   release,
		shim:      sh,
		conf:      conf,
		done:      make(chan struct{}),
		stdoutEnd: make(chan struct{}),
		pumpDone:  make(chan struct{}),
		stopReq:   make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	p.guard = &frameGuard{r: stdoutR, max: spec.MaxFrame, fault: p.frameFault}
	go p.reap()
	go p.pumpStderr()
	go p.supervise()
	spec.Logger.Debug("server started", "command", spec.Command, "pid", p.pid)
	return p, nil
}

// Sandbox says how the server is confined: its mode, the protections in
// force and those missing here. The zero Status (no mode) means it runs
// without a sandbox.
func (p *Process) Sandbox() sandbox.Status {
	if p.conf == nil {
		return sandbox.Status{}
	}
	return p.conf.status
}

// SandboxEvents says what the sandbox's limits did to the server: its
// processes killed at the memory limit, forks refused at the process
// limit. It is complete once Done is closed.
func (p *Process) SandboxEvents() sandbox.Events {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limits
}

// PID returns the direct child's process ID, which is also its process
// group ID: the server's shim's when it runs under one (see
// [MaybeRunShim]), else the server's.
func (p *Process) PID() int { return p.pid }

// StdoutEnded is closed once the reader of the connection made with
// Transport has read stdout to its end: the stray lines it held are then
// in the stderr tail.
func (p *Process) StdoutEnded() <-chan struct{} { return p.stdoutEnd }

// Done is closed when the direct child has exited and been reaped (its
// process group has been sent SIGKILL just before the reap).
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitErr describes how the server ended: nil while it runs and for exit
// status 0, otherwise an error naming the server and wrapping an
// *ExitError ("exit status 1", "signal: killed").
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// ExitStatus says how the server ended, as the operating system reports it
// ("exit status 0", "exit status 1", "signal: killed"); "" while it runs.
// Under the shim it is the server's own status, which the shim reports,
// or the shim's when the shim was killed before it could.
func (p *Process) ExitStatus() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// An ExitError is how a server that did not exit with status 0 ended.
type ExitError struct {
	Status syscall.WaitStatus
}

// Error words the status as os.ProcessState does.
func (e *ExitError) Error() string { return statusString(e.Status) }

func statusString(ws syscall.WaitStatus) string {
	var s string
	switch {
	case ws.Exited():
		s = "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		s = "signal: " + ws.Signal().String()
	default:
		s = fmt.Sprintf("wait status %#x", uint32(ws))
	}
	if ws.CoreDump() {
		s += " (core dumped)"
	}
	return s
}

// Fault returns the first fault the launcher found in the server's
// behaviour, which made it stop the server: an error wrapping
// ErrFrameTooLarge. It is nil if there was none.
func (p *Process) Fault() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// StderrTail returns the last Spec.StderrLimit bytes the server wrote to
// stderr, escaped with [Escape] and masked by Spec.Mask. It is complete
// once Stop has returned.
func (p *Process) StderrTail() string {
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	raw, total := p.tail.Bytes()
	if total == p.tailAt {
		return p.tailText // nothing written since
	}
	if p.spec.Mask != nil && total > int64(len(raw)) {
		raw = fromFirstLine(raw)
	}
	p.tailAt, p.tailText = total, p.mask(Escape(string(raw)))
	return p.tailText
}

// fromFirstLine drops what precedes the first whole line of a tail whose
// older bytes were dropped: the end of a secret cut there would not be
// recognised by Spec.Mask. A tail without a newline is kept.
func fromFirstLine(raw []byte) []byte {
	if i := bytes.IndexByte(raw, '\n'); i >= 0 && i+1 < len(raw) {
		return raw[i+1:]
	}
	return raw
}

// mask applies Spec.Mask, when set, to text from the server's stderr.
func (p *Process) mask(text string) string {
	if p.spec.Mask == nil {
		return text
	}
	return p.spec.Mask(text)
}

// Stop stops the server, following the MCP stdio shutdown sequence, applied
// to the whole process group:
//
//  1. close the child's stdin and wait up to StopStage for it to exit;
//  2. send SIGTERM to the group and wait up to TermGrace (2 s by default);
//  3. send SIGKILL to the group and wait up to StopStage.
//
// Whenever the direct child exits, the rest of its group is SIGKILLed before
// the child is reaped, so no grandchild outlives it. Stop then collects the
// remaining stderr and closes the pipes. It returns once all that is done,
// or after the third stage with an error if the child could not be reaped.
// It is idempotent and safe for concurrent use; every call returns the
// same result.
func (p *Process) Stop() error {
	p.requestStop()
	<-p.stopped
	return p.stopErr
}

// Abort stops the server like Stop, but without waiting for a graceful exit
// after closing stdin: SIGTERM follows at once (SIGKILL still a stage
// later). For a server that never completed the MCP handshake, or that
// broke the protocol, there is nothing to finish cleanly. If a Stop is
// already under way, Abort shortens its first stage when still possible.
func (p *Process) Abort() error {
	p.abort.Store(true)
	return p.Stop()
}

func (p *Process) requestStop() {
	p.stopOnce.Do(func() { close(p.stopReq) })
}

// supervise runs the stop sequence once it is requested.
func (p *Process) supervise() {
	<-p.stopReq
	p.stopErr = p.shutdown()
	close(p.stopped)
}

func (p *Process) shutdown() error {
	stage := p.spec.StopStage
	last := time.Now().Add(2*stage + p.spec.TermGrace) // end of the last stage

	// Stage 1 (MCP spec, stdio transport, shutdown): close the input stream.
	// An aborted server (Abort, or a frame fault) gets no grace period.
	p.stdin.Close()
	grace := stage
	if p.abort.Load() || p.Fault() != nil {
		grace = 0
	}
	exited := waitFor(p.done, grace)
	if !exited {
		p.spec.Logger.Info("server did not exit after its stdin was closed; sending SIGTERM to its process group",
			"pid", p.pid, "waited", stage)
		p.signal(syscall.SIGTERM)
		exited = waitFor(p.done, p.spec.TermGrace)
	}
	if !exited {
		p.spec.Logger.Warn("server did not exit after SIGTERM; sending SIGKILL to its process group",
			"pid", p.pid, "waited", p.spec.TermGrace)
		p.signal(syscall.SIGKILL)
		exited = waitFor(p.done, stage)
	}

	var err error
	if exited {
		// The group has been SIGKILLed (by reap); its members release the
		// stderr pipe as they die. Collect what they wrote, within the
		// time the stages allow.
		waitFor(p.pumpDone, time.Until(last))
	} else {
		err = fmt.Errorf("server %q: process %d did not exit within %v of SIGKILL", p.spec.Server, p.pid, stage)
		p.spec.Logger.Error("server process cannot be reaped", "pid", p.pid)
	}
	// Closing our ends ends the stderr pump and any pending stdout read even
	// if a process that escaped the group still holds the other ends.
	p.stdout.Close()
	p.stderr.Close()
	<-p.pumpDone
	return err
}

// waitFor reports whether ch is closed within d.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig to the child's process group, unless the child has been
// reaped: from then on the group ID may belong to someone else.
func (p *Process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signalLocked(sig)
}

func (p *Process) signalLocked(sig syscall.Signal) {
	if p.reaped {
		return
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.spec.Logger.Warn("cannot signal server process group", "pgid", p.pid, "signal", sig, "err", err)
	}
}

// reap waits for the direct child, kills the rest of its group and reaps it.
func (p *Process) reap() {
	var err error
	if waitExited(p.pid) {
		p.mu.Lock()
		// The server is gone; anything left in its group is an orphan no one
		// would ever stop. The unreaped zombie still pins the group ID, so
		// this cannot reach a recycled group.
		p.signalLocked(syscall.SIGKILL)
		err = p.cmd.Wait() // immediate: the child is a zombie
	} else {
		// Not on Linux: reap first (without the lock, this blocks), then
		// kill the group as soon as possible after.
		err = p.cmd.Wait()
		p.mu.Lock()
		if killGroupAfterReap {
			syscall.Kill(-p.pid, syscall.SIGKILL)
		}
	}
	p.reaped = true
	var ws syscall.WaitStatus
	ok := false
	if p.cmd.ProcessState != nil {
		ws, ok = p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	if p.shim != nil {
		if sws, reported := p.shim.exit(); reported {
			ws, ok = sws, true
		}
		p.shim.close()
	}
	var ee *exec.ExitError
	switch {
	case ok:
		p.status = statusString(ws)
		if !ws.Exited() || ws.ExitStatus() != 0 {
			p.exitErr = fmt.Errorf("server %q: %w", p.spec.Server, &ExitError{ws})
		}
	}
	if err != nil && p.exitErr == nil && !errors.As(err, &ee) {
		p.exitErr = fmt.Errorf("server %q: %w", p.spec.Server, err)
	}
	status := p.status
	p.mu.Unlock()

	limits := p.conf.release()
	p.mu.Lock()
	p.limits = limits
	p.mu.Unlock()
	if limits.OOMKills > 0 {
		p.spec.Logger.Warn("the server's sandbox killed a process of it at its memory limit",
			"server", p.spec.Server, "kills", limits.OOMKills)
	}
	if limits.PidsRefused > 0 {
		p.spec.Logger.Warn("the server's sandbox refused it new processes at its process limit",
			"server", p.spec.Server, "refused", limits.PidsRefused)
	}
	p.release()
	p.spec.Logger.Debug("server exited", "pid", p.pid, "status", status)
	close(p.done)
}

// pumpStderr copies the child's stderr into the tail (and, at debug level,
// the log) until EOF or until shutdown closes the pipe.
func (p *Process) pumpStderr() {
	defer close(p.pumpDone)
	var lines *lineLogger
	if p.spec.Logger.Enabled(context.Background(), slog.LevelDebug) {
		lines = &lineLogger{log: p.spec.Logger, mask: p.mask}
		defer lines.flush()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := p.stderr.Read(buf)
		if n > 0 {
			p.tail.Write(buf[:n])
			if lines != nil {
				lines.write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// frameFault is called by the guard when a stdout frame exceeds the cap.
func (p *Process) frameFault() error {
	err := &capError{
		msg:      fmt.Sprintf("server %q: stdout frame exceeds %s cap", p.spec.Server, bytesize.Format(int64(p.spec.MaxFrame))),
		sentinel: ErrFrameTooLarge,
	}
	p.mu.Lock()
	if p.fault == nil {
		p.fault = err
	}
	p.mu.Unlock()
	p.spec.Logger.Warn("stopping server: stdout frame too large", "pid", p.pid, "cap", p.spec.MaxFrame)
	p.requestStop()
	return err
}

// capError is an error with its own message that still matches its sentinel.
type capError struct {
	msg      string
	sentinel error
}

func (e *capError) Error() string { return e.msg }
func (e *capError) Unwrap() error { return e.sentinel }

// maxLogLine bounds one logged stderr line; the rest is dropped (the tail
// still has it).
const maxLogLine = 4 << 10

// lineLogger logs stderr line by line at debug level, escaped.
type lineLogger struct {
	log  *slog.Logger
	mask func(string) string
	line []byte
	cut  bool // line was longer than maxLogLine
}

func (l *lineLogger) write(p []byte) {
	for len(p) > 0 {
		chunk, rest, eol := bytes.Cut(p, []byte{'\n'})
		if room := maxLogLine - len(l.line); len(chunk) > room {
			chunk, l.cut = chunk[:room], true
		}
		l.line = append(l.line, chunk...)
		if !eol {
			return
		}
		l.emit()
		p = rest
	}
}

func (l *lineLogger) flush() {
	if len(l.line) > 0 || l.cut {
		l.emit()
	}
}

func (l *lineLogger) emit() {
	if l.cut {
		l.log.Debug("server stderr", "line", l.mask(Escape(string(l.line))), "truncated", true)
	} else {
		l.log.Debug("server stderr", "line", l.mask(Escape(string(l.line))))
	}
	l.line, l.cut = l.line[:0], false
}
