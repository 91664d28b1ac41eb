//go:build linux

package launcher

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Where a server cannot have a PID namespace, nothing kills what it leaves
// in its process group if the host itself is killed (SIGKILL, a crash):
// the parent-death signal reaches only the server. So each such server's
// group is recorded in Spec.LeftoverDir, in a file named
// "<pgid>-<start>.pgrp" (start: the leader's start time in clock ticks
// since boot, from /proc/PID/stat) holding the owning host's pid and start
// time. The record goes when the server is reaped. At every Start, a
// record whose owner is gone names a group that nobody stops: what is left
// in it, and started no earlier than its leader, is killed, with a warning.
// A descendant that left the group (setsid) is not found this way.

// startTime returns pid's start time in clock ticks since boot, or 0.
func startTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	_, _, start, ok := parseStat(b)
	if !ok {
		return 0
	}
	return start
}

// parseStat returns the state, process group and start time of a
// /proc/PID/stat line.
func parseStat(b []byte) (state byte, pgid int, start uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	pgid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], pgid, start, true
}

// recordGroup records the group of the server pid, which leads it, and
// returns what removes the record.
func recordGroup(dir string, pid int, log *slog.Logger) (remove func()) {
	start := startTime(pid)
	if dir == "" || start == 0 {
		return func() {}
	}
	// Mkdir, not MkdirAll: a record is no reason to create a home.
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		log.Warn("cannot record the server's process group", "err", err)
		return func() {}
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%d.pgrp", pid, start))
	owner := fmt.Sprintf("%d %d\n", os.Getpid(), startTime(os.Getpid()))
	if err := os.WriteFile(path, []byte(owner), 0o600); err != nil {
		log.Warn("cannot record the server's process group", "err", err)
		return func() {}
	}
	return func() { os.Remove(path) }
}

// killLeftovers kills what is left of the groups recorded in dir whose
// owner is gone, and removes their records.
func killLeftovers(dir string, log *slog.Logger) {
	if dir == "" {
		return
	}
	records, _ := filepath.Glob(filepath.Join(dir, "*.pgrp"))
	for _, path := range records {
		var pgid int
		var start uint64
		if _, err := fmt.Sscanf(filepath.Base(path), "%d-%d.pgrp", &pgid, &start); err != nil || pgid <= 1 {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var owner int
		var ownerStart uint64
		if _, err := fmt.Sscanf(string(b), "%d %d", &owner, &ownerStart); err != nil {
			continue
		}
		if owner > 0 && startTime(owner) == ownerStart {
			continue // its host still runs and stops it
		}
		if killed := killGroupMembers(pgid, start); len(killed) > 0 {
			log.Warn("killed processes that a server of a host that is gone left behind",
				"pgid", pgid, "pids", killed)
		}
		os.Remove(path)
	}
}

// killGroupMembers SIGKILLs the live processes of group pgid that started
// no earlier than its leader did (at start): a group ID is not reused while
// the group has a member, so these are the leader's.
func killGroupMembers(pgid int, start uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var members []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		state, g, s, ok := parseStat(b)
		if !ok || g != pgid || s < start || state == 'Z' || state == 'X' {
			continue
		}
		if pid == pgid && s != start {
			return nil // a new leader under a reused ID: not our group
		}
		members = append(members, pid)
	}
	var killed []int
	for _, pid := range members {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}
