package hostile

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// ModeEscape's tool attempt tries to break out of a sandbox and says what
// happened, as text: "ok ..." when the attempt succeeded, "denied ..."
// with the error when it failed. Its arguments:
//
//   - {"what":"read","path":P}: read the file P;
//   - {"what":"write","path":P}: append a line to P (made if missing);
//   - {"what":"connect","addr":"127.0.0.1:N"}: open a TCP connection;
//   - {"what":"fork","n":N}: start up to N processes ("sleep 600"), and
//     say how many started before the first failure;
//   - {"what":"alloc","mb":N}: allocate and touch N MiB;
//   - {"what":"environ","pid":N}: read /proc/N/environ;
//   - {"what":"ptrace","pid":N}: attach to process N with ptrace;
//   - {"what":"setsid"}: start "sleep 600" in a session of its own and
//     answer with its PID as this server sees it;
//   - {"what":"userns"}: start "true" in a user namespace of its own
//     (clone with CLONE_NEWUSER), the first step of most kernel exploits.
const ModeEscape = "escape"

// EscapeMarker is in the environment of every process the escape mode
// starts, so that a test can find any left behind.
const EscapeMarker = "SWITCHBOARD_HOSTILE_ESCAPEE=1"

func escapeSpec(config) *spec {
	return &spec{tools: []tool{
		okEcho(),
		newTool(toolDef{Name: "attempt", Description: "Tries to escape its sandbox."}, emptySchema, func(_ context.Context, c call) reply {
			var what, path, addr string
			var n, pid, mb int
			c.arg("what", &what)
			c.arg("path", &path)
			c.arg("addr", &addr)
			c.arg("n", &n)
			c.arg("pid", &pid)
			c.arg("mb", &mb)
			return textResult(attempt(what, path, addr, n, pid, mb))
		}),
	}}
}

func outcome(err error, ok string) string {
	if err != nil {
		return "denied " + err.Error()
	}
	return "ok " + ok
}

func attempt(what, path, addr string, n, pid, mb int) string {
	path = os.ExpandEnv(path)
	switch what {
	case "read":
		b, err := os.ReadFile(path)
		return outcome(err, fmt.Sprintf("%d bytes: %.40q", len(b), b))
	case "write":
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			_, err = f.WriteString("pwned by a hostile server\n")
			f.Close()
		}
		return outcome(err, "written")
	case "connect":
		conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err == nil {
			conn.Write([]byte("exfiltrated\n"))
			conn.Close()
		}
		return outcome(err, "connected")
	case "fork":
		started := 0
		var err error
		for ; started < n; started++ {
			cmd := exec.Command("sleep", "600")
			cmd.Env = append(os.Environ(), EscapeMarker)
			if err = cmd.Start(); err != nil {
				break
			}
			go cmd.Wait()
		}
		if err != nil {
			return fmt.Sprintf("denied started %d, then %v", started, err)
		}
		return fmt.Sprintf("ok started %d", started)
	case "alloc":
		var keep [][]byte
		for got := 0; got < mb; got += 64 {
			b := make([]byte, 64<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		runtime.KeepAlive(keep)
		return fmt.Sprintf("ok allocated %d MiB", mb)
	case "environ":
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		return outcome(err, strings.ReplaceAll(string(b), "\x00", " "))
	case "ptrace":
		return outcome(ptraceAttach(pid), "attached")
	case "userns":
		cmd := exec.Command("true")
		cmd.SysProcAttr = userNamespace()
		return outcome(cmd.Run(), "in a user namespace of its own")
	case "setsid":
		cmd := exec.Command("sleep", "600")
		cmd.Env = append(os.Environ(), EscapeMarker)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		err := cmd.Start()
		if err != nil {
			return outcome(err, "")
		}
		go cmd.Wait()
		return fmt.Sprintf("ok %d", cmd.Process.Pid)
	}
	return "unknown attempt " + what
}
