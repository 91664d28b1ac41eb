//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The controllers a server's cgroup needs.
var controllers = []string{"memory", "pids", "cpu"}

// detectCgroup finds where this process may create cgroups: beneath its
// own cgroup of the unified (v2) hierarchy when that has the three
// controllers delegated and is writable, else beneath its own cgroup of
// each v1 hierarchy when all three are writable.
func detectCgroup() (string, map[string]string) {
	own := map[string]string{} // controller (or "" for v2) → own cgroup path
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	if p, ok := own[""]; ok {
		for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			dir := filepath.Join(mnt, p)
			b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if err != nil {
				continue
			}
			have := strings.Fields(string(b))
			ok := true
			for _, c := range controllers {
				ok = ok && contains(have, c)
			}
			if ok && syscall.Access(dir, 2 /* W_OK */) == nil {
				return "v2", map[string]string{"": dir}
			}
		}
	}
	parents := map[string]string{}
	for _, c := range controllers {
		p, ok := own[c]
		if !ok {
			return "", nil
		}
		dir := filepath.Join("/sys/fs/cgroup", c, p)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
			return "", nil
		}
		if syscall.Access(dir, 2 /* W_OK */) != nil {
			return "", nil
		}
		parents[c] = dir
	}
	return "v1", parents
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A Cgroup is one server's cgroup (a directory per v1 hierarchy, or one
// v2 directory), made by [NewCgroup] and removed by [Cgroup.Remove].
type Cgroup struct {
	kind string
	dirs map[string]string // controller ("" for v2) → directory
}

// NewCgroup makes a cgroup named name beneath the parents s found, with
// p's limits: memory (swap included, so that it cannot spill over),
// processes and threads, and CPU as a rate over 100 ms periods.
func NewCgroup(name string, p Policy, s Support) (*Cgroup, error) {
	if s.Cgroup == "" {
		return nil, errNoCgroup
	}
	cg := &Cgroup{kind: s.Cgroup, dirs: map[string]string{}}
	for c, parent := range s.CgroupParents {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			cg.Remove()
			return nil, err
		}
		cg.dirs[c] = dir
	}
	const period = 100000 // µs
	quota := int64(p.CPU * period)
	var writes [][2]string
	if s.Cgroup == "v2" {
		d := cg.dirs[""]
		if p.MemoryBytes > 0 {
			writes = append(writes, [2]string{filepath.Join(d, "memory.max"), fmt.Sprint(p.MemoryBytes)},
				[2]string{filepath.Join(d, "memory.swap.max"), "0"})
		}
		if p.Processes > 0 {
			writes = append(writes, [2]string{filepath.Join(d, "pids.max"), fmt.Sprint(p.Processes)})
		}
		if quota > 0 {
			writes = append(writes, [2]string{filepath.Join(d, "cpu.max"), fmt.Sprintf("%d %d", quota, period)})
		}
	} else {
		if p.MemoryBytes > 0 {
			m := cg.dirs["memory"]
			writes = append(writes, [2]string{filepath.Join(m, "memory.limit_in_bytes"), fmt.Sprint(p.MemoryBytes)},
				[2]string{filepath.Join(m, "memory.memsw.limit_in_bytes"), fmt.Sprint(p.MemoryBytes)},
				[2]string{filepath.Join(m, "memory.swappiness"), "0"})
		}
		if p.Processes > 0 {
			writes = append(writes, [2]string{filepath.Join(cg.dirs["pids"], "pids.max"), fmt.Sprint(p.Processes)})
		}
		if quota > 0 {
			c := cg.dirs["cpu"]
			writes = append(writes, [2]string{filepath.Join(c, "cpu.cfs_period_us"), fmt.Sprint(period)},
				[2]string{filepath.Join(c, "cpu.cfs_quota_us"), fmt.Sprint(quota)})
		}
	}
	for _, w := range writes {
		err := os.WriteFile(w[0], []byte(w[1]), 0)
		if err != nil && !(errors.Is(err, os.ErrNotExist) && (strings.Contains(w[0], "swap") || strings.Contains(w[0], "memsw"))) {
			cg.Remove()
			return nil, fmt.Errorf("cgroup %s: %w", w[0], err)
		}
	}
	return cg, nil
}

// Dirs are the directories the server's shim joins.
func (cg *Cgroup) Dirs() []string {
	var out []string
	for _, d := range cg.dirs {
		out = append(out, d)
	}
	return out
}

// Events says what the limits did: how many times a process was killed
// for want of memory and how many forks the process limit refused.
type Events struct {
	OOMKills    int
	PidsRefused int
}

// Events reads the cgroup's counters.
func (cg *Cgroup) Events() Events {
	var e Events
	if cg == nil {
		return e
	}
	if cg.kind == "v2" {
		d := cg.dirs[""]
		e.OOMKills = readKey(filepath.Join(d, "memory.events"), "oom_kill")
		e.PidsRefused = readKey(filepath.Join(d, "pids.events"), "max")
		return e
	}
	e.OOMKills = readKey(filepath.Join(cg.dirs["memory"], "memory.oom_control"), "oom_kill")
	e.PidsRefused = readKey(filepath.Join(cg.dirs["pids"], "pids.events"), "max")
	return e
}

func readKey(file, key string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Remove removes the cgroup, once its processes are gone (the kernel
// refuses to remove a cgroup that holds one; it retries for a second).
func (cg *Cgroup) Remove() error {
	if cg == nil {
		return nil
	}
	var err error
	for _, d := range cg.dirs {
		for i := 0; i < 1000; i++ {
			err = os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	return err
}
