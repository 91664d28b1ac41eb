//go:build linux

package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Info
	}{
		{
			name: "plain",
			in:   "42 (sleep) S 7 42 7 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 1 2 3\n",
			want: Info{PID: 42, PPID: 7, PGID: 42, State: 'S', Comm: "sleep"},
		},
		{
			name: "cpu",
			in:   "7 (go) R 1 7 7 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 1 0 1 2 3\n",
			want: Info{PID: 7, PPID: 1, PGID: 7, State: 'R', Comm: "go", CPU: 3250 * time.Millisecond},
		},
		{
			name: "comm with spaces and parens",
			in:   "9 (a) R 1 (b c)) Z 3 11 3 0 -1\n",
			want: Info{PID: 9, PPID: 3, PGID: 11, State: 'Z', Comm: "a) R 1 (b c)"},
		},
		{
			name: "empty comm",
			in:   "5 () D 1 5 5",
			want: Info{PID: 5, PPID: 1, PGID: 5, State: 'D', Comm: ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseStat(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseStatErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"42 sleep S 1 1",
		"42 (sleep) S 1",
		"x (sleep) S 1 1",
		"42 (sleep) S x 1",
		"42 (sleep) S 1 x",
		"42 (sleep) SS 1 1",
		"42 )sleep( S 1 1",
		"42 (sleep) S 1 1 1 0 -1 0 0 0 0 0 x 0",
		"42 (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 -1",
		"42 (sleep) S 1 1 1 0 -1 0 0 0 0 0 9223372036854775807 0",
	} {
		if got, err := ParseStat([]byte(in)); err == nil {
			t.Errorf("ParseStat(%q) = %v, want error", in, got)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (sleep) S 7 42 7 0 -1\n"))
	f.Add([]byte("9 (a) R 1 (b c)) Z 3 11 3 0 -1\n"))
	f.Add([]byte("7 (go) R 1 7 7 0 -1 4194304 100 0 0 0 250 75 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := ParseStat(b)
		if err != nil {
			return
		}
		// Whatever parsed must survive a round trip through the kernel's format.
		line := fmt.Sprintf("%d (%s) %s %d %d 0 0 -1 0 0 0 0 0 %d 0\n",
			info.PID, info.Comm, []byte{info.State}, info.PPID, info.PGID, info.CPU/(10*time.Millisecond))
		again, err := ParseStat([]byte(line))
		if err != nil {
			t.Fatalf("ParseStat(%q) (re-encoded from %q): %v", line, b, err)
		}
		if diff := cmp.Diff(info, again); diff != "" {
			t.Errorf("round trip of %q mismatch (-first +second):\n%s", b, diff)
		}
	})
}

func TestSelf(t *testing.T) {
	self, err := Get(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PPID != os.Getppid() || self.PGID != syscall.Getpgrp() {
		t.Errorf("Get(self) = %v, want ppid %d pgid %d", self, os.Getppid(), syscall.Getpgrp())
	}
	if len(self.Cmdline) == 0 || self.Cmdline[0] != os.Args[0] {
		t.Errorf("Get(self).Cmdline = %q, want to start with %q", self.Cmdline, os.Args[0])
	}
	if !Alive(os.Getpid()) {
		t.Error("Alive(self) = false")
	}
}

func TestChildLifecycle(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run sleep: %v", err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	if got := Children(os.Getpid()); !containsPID(got, pid) {
		t.Errorf("Children(self) = %v, want to contain %d", got, pid)
	}
	if got := InGroup(pid); len(got) != 1 || got[0].PID != pid {
		t.Errorf("InGroup(%d) = %v, want just the child", pid, got)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Killed but not reaped: a zombie, not alive, still present.
	WaitGone(t, 10*time.Second, func() bool { return !Alive(pid) })
	if !Exists(pid) {
		t.Fatalf("pid %d vanished before it was reaped", pid)
	}
	if got := Zombies(os.Getpid()); !containsPID(got, pid) {
		t.Errorf("Zombies(self) = %v, want to contain %d", got, pid)
	}

	cmd.Wait()
	if Exists(pid) {
		t.Errorf("pid %d still present after Wait", pid)
	}
	if _, err := Get(pid); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get(reaped) error = %v, want fs.ErrNotExist", err)
	}
	if got := Zombies(os.Getpid()); containsPID(got, pid) {
		t.Errorf("Zombies(self) = %v after Wait", got)
	}
}

func TestEventually(t *testing.T) {
	n := 0
	if !Eventually(time.Minute, func() bool { n++; return n == 3 }) {
		t.Error("Eventually = false, want true")
	}
	if Eventually(0, func() bool { return false }) {
		t.Error("Eventually(never) = true")
	}
}

func containsPID(list []Info, pid int) bool {
	for _, i := range list {
		if i.PID == pid {
			return true
		}
	}
	return false
}
