//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// DeniedSyscalls are the system calls a server never needs, answered with
// EPERM: tracing and reading other processes, kernel modules and
// execution, mounts and namespaces (and clone into new ones, below), BPF
// and performance counters, the
// kernel keyring, userfaultfd (a tool of kernel exploits), swap, the clock
// and reboot.
var DeniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
	"bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
	"swapon", "swapoff", "reboot", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "lookup_dcookie", "quotactl", "nfsservctl", "vhangup", "name_to_handle_at", "open_by_handle_at",
}

// cloneNewFlags are clone's flags that make a process in new namespaces:
// mount, cgroup, UTS, IPC, user, PID, network and time.
const cloneNewFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWCGROUP | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC |
	syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | 0x80 /* CLONE_NEWTIME */

// ipprotoMPTCP: Landlock's TCP rules do not cover Multipath TCP sockets,
// so a socket of that protocol is refused.
const ipprotoMPTCP = 262

// Apply confines the calling thread, which must be locked to its
// goroutine (runtime.LockOSThread) and never unlocked, and every process
// it starts after,
// by p: no new privileges, the system calls of DeniedSyscalls refused,
// Landlock's file, TCP port and IPC scope rules, the cgroups of
// p.Cgroups joined, and RLIMIT_NPROC and RLIMIT_CORE. It applies what the
// kernel offers (see [Plan] for what is missing) and fails only when a
// mechanism the kernel offers refuses p. The seccomp filter applies to
// every thread of the process (TSYNC), Landlock to the calling thread.
func Apply(p Policy) error {
	if !p.Mode.Enforced() {
		return nil
	}
	for _, dir := range p.Cgroups {
		// "0" is the writer: this process, whatever its PID namespace.
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0\n"), 0); err != nil {
			return fmt.Errorf("joining cgroup %s: %w", dir, err)
		}
	}
	if err := setRlimit(syscall.RLIMIT_CORE, 0); err != nil {
		return fmt.Errorf("RLIMIT_CORE: %w", err)
	}
	if p.NprocLimit > 0 {
		if err := setRlimit(6 /* RLIMIT_NPROC */, uint64(p.NprocLimit)); err != nil {
			return fmt.Errorf("RLIMIT_NPROC: %w", err)
		}
	}
	if err := seccomp.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := landlockPaths(p); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if seccomp.Supported() {
		if err := loadSeccomp(); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return nil
}

func setRlimit(resource int, n uint64) error {
	return syscall.Setrlimit(resource, &syscall.Rlimit{Cur: n, Max: n})
}

// File rights: those that apply to files, for a grant that names one.
const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

const (
	readRights  = ll.AccessFSReadFile | ll.AccessFSReadDir
	execRights  = readRights | ll.AccessFSExecute
	writeRights = execRights | ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym |
		ll.AccessFSRefer | ll.AccessFSTruncate
)

func landlockPaths(p Policy) error {
	cfg := landlock.V11.BestEffort()
	var rules []landlock.Rule
	add := func(paths []string, rights landlock.AccessFSSet) {
		for _, path := range paths {
			fi, err := os.Stat(path)
			if err != nil {
				continue // a default that is not on this system
			}
			r := rights
			if !fi.IsDir() {
				r &= fileRights
			}
			if fi.Mode()&os.ModeDevice != 0 {
				r |= ll.AccessFSIoctlDev & rights
			}
			rules = append(rules, landlock.PathAccess(r, path))
		}
	}
	add(p.Read, readRights)
	add(p.Exec, execRights)
	add(p.Write, writeRights)
	if len(p.Network.Ports) > 0 && !p.Network.Off {
		rules = append(rules, landlock.ConnectSendUDP(53))
		for _, port := range p.Network.Ports {
			rules = append(rules, landlock.ConnectTCP(port), landlock.ConnectSendUDP(port))
		}
	} else {
		// Network on (or off, by the network namespace): no port rules.
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err
	}
	defer syscall.Close(fd)
	// This thread only: the caller has locked it and forks the server
	// from it, which inherits its domain. (go-landlock's all-threads
	// enforcement, which signals every thread through psx on kernels
	// without Landlock's TSYNC, never returned in the shim.)
	return ll.LandlockRestrictSelf(fd, flags)
}

func loadSeccomp() error {
	info, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	var names []string
	for _, n := range DeniedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	groups := []seccomp.SyscallGroup{{
		Action: seccomp.ActionErrno,
		Names:  names,
		NamesWithCondtions: []seccomp.NameWithConditions{{
			Name:       "socket",
			Conditions: seccomp.ArgumentConditions{{Argument: 2, Operation: seccomp.Equal, Value: ipprotoMPTCP}},
		}, {
			// A process made in new namespaces (a user namespace above
			// all, the way into most kernel exploits): clone with any
			// CLONE_NEW* flag, as unshare and setns are.
			Name:       "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNewFlags}},
		}},
	}}
	if _, ok := info.SyscallNames["clone3"]; ok {
		// clone3 passes its flags in memory, out of seccomp's sight: it
		// is answered ENOSYS, on which libc and Go use clone, whose
		// flags are seen above.
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno | seccomp.Action(syscall.ENOSYS), Names: []string{"clone3"}})
	}
	return seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups},
	})
}

// Detect reports what this kernel and user offer. It reads /proc and
// /sys only.
func Detect() Support {
	s := Support{OS: "linux", Root: os.Geteuid() == 0}
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		s.Landlock = v
	}
	s.Seccomp = seccomp.Supported()
	s.UserNS = s.Root || userNamespaces()
	s.NetNS = s.UserNS
	s.Cgroup, s.CgroupParents = detectCgroup()
	return s
}

// userNamespaces reports whether an unprivileged user may create a user
// namespace here (the sysctls Debian, Ubuntu and the kernel have for it).
func userNamespaces() bool {
	for _, f := range []string{"/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		on := len(b) > 0 && b[0] == '1'
		if f == "/proc/sys/kernel/unprivileged_userns_clone" && !on {
			return false
		}
		if f == "/proc/sys/kernel/apparmor_restrict_unprivileged_userns" && on {
			return false
		}
	}
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	return err == nil && len(b) > 0 && b[0] != '0'
}

var errNoCgroup = errors.New("no cgroup")
