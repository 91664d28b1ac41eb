// Package sandbox confines one stdio server on Linux: what it may read,
// write and execute (Landlock), which TCP ports it may use (Landlock) or
// whether it has a network at all (a network namespace of its own, made by
// the launcher), which system calls it may make (a seccomp deny-list), no
// new privileges, no view of other processes (Landlock's ptrace and signal
// scoping), and how much memory, how many processes and how much CPU it
// may use (a cgroup per server).
//
// The package owns the policy and the mechanisms, not the process: the
// launcher resolves a [Policy] from a server's [Settings] ([Resolve]),
// asks what this kernel offers ([Detect]), decides what is in force and
// what is missing ([Plan]), makes the server's cgroup ([NewCgroup]), and
// passes the policy to its shim, which calls [Apply] before it starts the
// server. Off Linux nothing is applied and every protection is missing.
//
// It imports only the standard library, github.com/landlock-lsm/go-landlock
// and github.com/elastic/go-seccomp-bpf: it is a leaf.
package sandbox
