//go:build unix

package launcher

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/sandbox"
)

// Defaults for the zero values of [Spec].
const (
	DefaultMaxFrame    = 16 << 20 // 16 MiB
	DefaultStderrLimit = 64 << 10 // 64 KiB
	DefaultStopStage   = 5 * time.Second
	DefaultTermGrace   = 2 * time.Second
)

// sdkSlack is how much larger than MaxFrame go-sdk's own line limit
// (IOTransport.MaxLineLength) is set, so that our guard, which names the
// server and the cap, always fails first.
const sdkSlack = 1 << 20

// Spec describes one stdio server to launch. The zero value of every
// optional field selects the documented default.
type Spec struct {
	// Server is the server's name in the config; every error names it.
	Server string
	// Command is the program: a bare name is looked up in the child's PATH,
	// a name with a slash is used as is (relative to Dir). It is executed
	// directly with Args as its arguments, never through a shell.
	Command string
	Args    []string
	// Env is added to the few host variables the child inherits (HOME,
	// PATH, TMPDIR, LANG; see [ChildEnv]) and overrides them. Keys must be
	// non-empty and contain neither '=' nor NUL; values must not contain NUL.
	Env map[string]string
	// Dir is the child's working directory; "" means ours. A relative Dir is
	// relative to our working directory.
	Dir string
	// Runtime maps runtimes the server needs (the keys of [RuntimeNames]:
	// "node", "python", "uv", "bun", "deno", "docker") to a version
	// requirement (">=20", "^3.11"; "" for any version). Start checks them
	// before it starts the child: a command that is a runtime or a
	// runtime's launcher (npx needs node, uvx needs uv) must exist on the
	// child's PATH whatever Runtime says, and each runtime listed must
	// exist and, when a requirement is given, meet it (its `--version` is
	// run once per binary, bounded by VersionTimeout). A failure is a
	// *RuntimeError, which says how to get the runtime; nil means only the
	// command's own runtime is checked.
	Runtime map[string]string

	// MaxFrame caps one stdout frame (the bytes between two newlines);
	// 0 or negative means DefaultMaxFrame (16 MiB). A longer frame fails the
	// server with ErrFrameTooLarge and stops it.
	MaxFrame int
	// FrameFilter, when set, sees every stdout frame that may be a
	// JSON-RPC message (newline included; lines that are not are skipped
	// first, see [Process.Stray]) before the MCP SDK does and returns the frame to deliver
	// (it may return its argument); an empty result drops the frame. It
	// runs on the connection's reading goroutine; the frame's memory is
	// reused after it returns.
	FrameFilter func(frame []byte) []byte
	// Mask, when set, rewrites stderr text before anyone sees it: the tail
	// StderrTail returns and each line logged. It hides the server's
	// secrets (see config.Mask); the tail keeps StderrLimit raw bytes and
	// is masked when read, from its first whole line once older bytes were
	// dropped (a secret cut there would not be recognised).
	Mask func(string) string
	// StderrLimit is how many trailing bytes of stderr are kept;
	// 0 or negative means DefaultStderrLimit (64 KiB).
	StderrLimit int
	// StopStage bounds the first and last stop stages (after closing
	// stdin, after SIGKILL); 0 or negative means DefaultStopStage (5 s).
	StopStage time.Duration
	// TermGrace is how long the stop sequence waits after SIGTERM before
	// SIGKILL; 0 or negative means DefaultTermGrace (2 s), and it is never
	// longer than StopStage. A server that handles SIGTERM exits well
	// within it; one that ignores it is not waited for long. Stop returns
	// within about 2×StopStage+TermGrace.
	TermGrace time.Duration

	// LeftoverDir, when set, is where a server started without a PID
	// namespace of its own has its process group recorded while it runs,
	// so that, should this program be killed without stopping it, the
	// next Start with the same LeftoverDir kills what is left of that
	// group, with a warning (Linux only). Under the shim (see
	// [MaybeRunShim]) nothing is left to kill and nothing is recorded.
	LeftoverDir string

	// Sandbox, when set, confines the server (Linux, under the shim: see
	// [MaybeRunShim]): its settings are resolved into a policy by
	// sandbox.Resolve, what this system lacks is reported by
	// [Process.Sandbox], and a server whose mode is "required" does not
	// start when a protection it asks for is missing (a *SandboxError).
	// nil runs the server unconfined and reports it as not sandboxed.
	Sandbox *sandbox.Settings
	// SwitchboardHome is never granted to a sandboxed server: a grant
	// that would open it is refused.
	SwitchboardHome string
	// CacheDir holds each sandboxed server's private directory (its npm
	// and uv caches), kept from one start to the next, named after the
	// server; "" leaves the caches where the package managers put them.
	CacheDir string
	// Upgrade says that the server ran before it had a sandbox: while it
	// has never started sandboxed (its directory in CacheDir does not
	// exist), a sandbox in the default mode ("on", not written in its
	// configuration) runs in report mode, and is enforced from the start
	// after one that found nothing it would deny.
	Upgrade bool

	// Logger receives lifecycle events and, at debug level, each stderr line
	// (escaped). nil means discard.
	Logger *slog.Logger
	// LookupEnv reads the host environment; nil means os.LookupEnv. Tests
	// use it to fake the host.
	LookupEnv func(string) (string, bool)

	// direct starts the server without the shim (tests of what the shim
	// does not cover).
	direct bool
}

// withDefaults returns s with every zero optional field replaced by its default.
func (s Spec) withDefaults() Spec {
	if s.MaxFrame <= 0 {
		s.MaxFrame = DefaultMaxFrame
	}
	// Keep MaxFrame+sdkSlack (and the guard's arithmetic) from overflowing.
	s.MaxFrame = min(s.MaxFrame, math.MaxInt-sdkSlack)
	if s.StderrLimit <= 0 {
		s.StderrLimit = DefaultStderrLimit
	}
	if s.StopStage <= 0 {
		s.StopStage = DefaultStopStage
	}
	if s.TermGrace <= 0 {
		s.TermGrace = DefaultTermGrace
	}
	s.TermGrace = min(s.TermGrace, s.StopStage)
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.LookupEnv == nil {
		s.LookupEnv = os.LookupEnv
	}
	return s
}

// ErrProgramNotFound means the configured command could not be found (for a
// bare name: in any directory of the child's PATH). Test with errors.Is; the
// error itself is a *StartError.
var ErrProgramNotFound = errors.New("program not found")

// ErrFrameTooLarge means the server wrote a stdout frame longer than
// Spec.MaxFrame. The server has been stopped. Test with errors.Is; see
// [Process.Fault].
var ErrFrameTooLarge = errors.New("stdout frame too large")

// A StartError reports why [Start] failed.
type StartError struct {
	Server  string // Spec.Server
	Program string // Spec.Command, as configured
	// PATH is the search path used to look up a bare program name ("" when
	// Program contains a slash and was not looked up).
	PATH string
	Err  error // ErrProgramNotFound, a *RuntimeError, or the underlying cause
}

func (e *StartError) Error() string {
	var re *RuntimeError
	switch {
	case errors.As(e.Err, &re):
		return re.Error()
	case errors.Is(e.Err, ErrProgramNotFound) && !strings.Contains(e.Program, "/"):
		return fmt.Sprintf("server %q: program %q not found in PATH (%s): install it or set \"command\" to its full path",
			e.Server, e.Program, e.PATH)
	case errors.Is(e.Err, ErrProgramNotFound):
		return fmt.Sprintf("server %q: program %q not found: check \"command\" (a relative path is relative to \"cwd\")",
			e.Server, e.Program)
	default:
		return fmt.Sprintf("server %q: starting %q: %v", e.Server, e.Program, e.Err)
	}
}

func (e *StartError) Unwrap() error { return e.Err }
