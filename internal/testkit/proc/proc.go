//go:build linux

// Package proc reads Linux /proc so that tests can assert process hygiene:
// that a launched server and everything it spawned is gone, that nothing was
// left as a zombie, that a process group is empty.
//
// It is a test kit: only _test.go files may import it. It imports nothing
// from switchboard and nothing outside the standard library. Its helpers
// panic when /proc itself cannot be read, because an unreadable /proc would
// otherwise make every "nothing is left" assertion pass vacuously.
//
// Polling /proc (see [Eventually] and [WaitGone]) is the one place where the
// test suites are allowed to poll: there is no way to wait for a process that
// is not our child.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Info is one process as seen in /proc.
type Info struct {
	PID  int
	PPID int
	PGID int
	// State is the state letter from /proc/PID/stat: R running, S sleeping,
	// D disk sleep, T stopped, t tracing stop, Z zombie, X dead, I idle, ...
	State byte
	// Comm is the command name from /proc/PID/stat (at most 15 bytes, set by
	// the process; it may contain spaces and parentheses).
	Comm string
	// Cmdline is the argument vector; empty for zombies and kernel threads.
	Cmdline []string
	// CPU is the CPU time (user + system, all threads) the process has
	// used, from the utime and stime fields; 0 when a stat line ends
	// before them.
	CPU time.Duration
}

// Zombie reports whether the process has exited but has not been reaped
// (states Z and X).
func (i Info) Zombie() bool { return i.State == 'Z' || i.State == 'X' }

// String formats the process for test failure messages.
func (i Info) String() string {
	return fmt.Sprintf("pid=%d ppid=%d pgid=%d state=%c comm=%q cmdline=%q",
		i.PID, i.PPID, i.PGID, i.State, i.Comm, i.Cmdline)
}

// ParseStat parses the content of /proc/PID/stat. The comm field is enclosed
// in parentheses and may itself contain spaces and parentheses (a process
// can name itself "a) R 1 (b"), so it runs from the first '(' to the last
// ')': none of the fields after comm can contain a ')'.
func ParseStat(b []byte) (Info, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Info{}, fmt.Errorf("proc: malformed stat %q: no (comm)", b)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Info{}, fmt.Errorf("proc: malformed stat pid: %w", err)
	}
	// After "(comm) " come: state ppid pgrp session ...
	rest := strings.Fields(string(b[closing+1:]))
	if len(rest) < 3 || len(rest[0]) != 1 {
		return Info{}, fmt.Errorf("proc: malformed stat %q: short field list", b)
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil {
		return Info{}, fmt.Errorf("proc: malformed stat ppid: %w", err)
	}
	pgid, err := strconv.Atoi(rest[2])
	if err != nil {
		return Info{}, fmt.Errorf("proc: malformed stat pgrp: %w", err)
	}
	info := Info{
		PID:   pid,
		PPID:  ppid,
		PGID:  pgid,
		State: rest[0][0],
		Comm:  string(b[open+1 : closing]),
	}
	// utime and stime are the 14th and 15th fields of the line, in clock
	// ticks (USER_HZ, 100 on Linux).
	if len(rest) >= 13 {
		utime, err1 := strconv.ParseUint(rest[11], 10, 63)
		stime, err2 := strconv.ParseUint(rest[12], 10, 63)
		if err := errors.Join(err1, err2); err != nil {
			return Info{}, fmt.Errorf("proc: malformed stat utime/stime: %w", err)
		}
		const tick = time.Second / userHZ
		if utime+stime > math.MaxInt64/uint64(tick) {
			return Info{}, fmt.Errorf("proc: stat utime %d + stime %d ticks out of range", utime, stime)
		}
		info.CPU = time.Duration(utime+stime) * tick
	}
	return info, nil
}

// userHZ is the unit of /proc's clock-tick fields on Linux.
const userHZ = 100

// Get reads one process. The error wraps [fs.ErrNotExist] when the process
// does not exist (it was reaped, or never existed).
func Get(pid int) (Info, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		// ESRCH can surface while the process is being torn down.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return Info{}, fmt.Errorf("proc: pid %d: %w", pid, fs.ErrNotExist)
		}
		return Info{}, err
	}
	info, err := ParseStat(stat)
	if err != nil {
		return Info{}, err
	}
	// A failed cmdline read (process gone meanwhile, or a zombie) leaves
	// Cmdline empty; the stat fields are still a valid snapshot.
	if cmd, err := os.ReadFile(dir + "/cmdline"); err == nil {
		cmd = bytes.TrimRight(cmd, "\x00")
		if len(cmd) > 0 {
			info.Cmdline = strings.Split(string(cmd), "\x00")
		}
	}
	return info, nil
}

// List returns every process visible in /proc. Processes that disappear
// while the listing is taken are skipped.
func List() ([]Info, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		info, err := Get(pid)
		if err != nil {
			continue // gone, or unreadable: not ours to judge
		}
		out = append(out, info)
	}
	return out, nil
}

// Children returns the processes whose parent is ppid, zombies included.
func Children(ppid int) []Info { return filter(func(i Info) bool { return i.PPID == ppid }) }

// InGroup returns the processes in process group pgid, zombies included.
func InGroup(pgid int) []Info { return filter(func(i Info) bool { return i.PGID == pgid }) }

// Zombies returns the unreaped children of ppid.
func Zombies(ppid int) []Info {
	return filter(func(i Info) bool { return i.PPID == ppid && i.Zombie() })
}

// Live returns the processes of list that are not zombies.
func Live(list []Info) []Info {
	var out []Info
	for _, i := range list {
		if !i.Zombie() {
			out = append(out, i)
		}
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	info, err := Get(pid)
	return err == nil && !info.Zombie()
}

// Exists reports whether pid is present in /proc at all (zombies included),
// i.e. whether it has not been reaped yet.
func Exists(pid int) bool {
	_, err := Get(pid)
	return err == nil
}

// Eventually polls pred every few milliseconds until it returns true or
// timeout passes, and reports whether it returned true.
func Eventually(timeout time.Duration, pred func() bool) bool {
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		if pred() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}

// WaitGone polls pred (for example "no live process in group g") until it
// returns true, and fails the test if it has not within timeout. Use generous
// timeouts: a process that was sent SIGKILL is gone as soon as the kernel
// schedules it, but that is not instantaneous on a loaded machine.
func WaitGone(t testing.TB, timeout time.Duration, pred func() bool) {
	t.Helper()
	if !Eventually(timeout, pred) {
		t.Fatalf("proc: condition still false after %v", timeout)
	}
}

func filter(keep func(Info) bool) []Info {
	all, err := List()
	if err != nil {
		panic(fmt.Sprintf("proc: cannot list /proc: %v", err))
	}
	var out []Info
	for _, i := range all {
		if keep(i) {
			out = append(out, i)
		}
	}
	return out
}

// NSPids returns pid's process IDs in each PID namespace it belongs to,
// from the namespace of /proc outward in (the NSpid line of
// /proc/PID/status); nil when it cannot be read.
func NSPids(pid int) []int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		var out []int
		for _, f := range strings.Fields(v) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil
			}
			out = append(out, n)
		}
		return out
	}
	return nil
}

// HostPID translates nspid, a process ID as seen inside the PID namespace
// whose first process is init (given by its ID here), into its ID here.
// It returns 0 when no descendant of init has that ID there.
func HostPID(init, nspid int) int {
	depth := len(NSPids(init)) - 1
	if depth < 0 {
		return 0
	}
	all, err := List()
	if err != nil {
		panic(fmt.Sprintf("proc: cannot list /proc: %v", err))
	}
	parent := map[int]int{}
	for _, i := range all {
		parent[i.PID] = i.PPID
	}
	for _, i := range all {
		ids := NSPids(i.PID)
		if len(ids) <= depth || ids[depth] != nspid {
			continue
		}
		for p := i.PID; p > 1; p = parent[p] {
			if p == init {
				return i.PID
			}
		}
	}
	return 0
}

// Descendants returns the live processes below pid, through parent links.
func Descendants(pid int) []Info {
	all, err := List()
	if err != nil {
		panic(fmt.Sprintf("proc: cannot list /proc: %v", err))
	}
	parent := map[int]int{}
	for _, i := range all {
		parent[i.PID] = i.PPID
	}
	var out []Info
	for _, i := range all {
		for p := i.PPID; p > 1; p = parent[p] {
			if p == pid {
				if !i.Zombie() {
					out = append(out, i)
				}
				break
			}
		}
	}
	return out
}
