// Package supervise decides when Switchboard (re)connects to an upstream MCP
// server: one state machine per server, the start-up attempts and their
// backoff, the slow probing of a server that was left out, and the circuit
// that opens when a server crash-loops.
//
// The package makes decisions and nothing else. It does no I/O, starts no
// goroutines and never sleeps: the host dials, lists tools and calls, and
// reports each outcome here; it asks [Supervisor.Acquire] "may I dial this
// server now?" when a call arrives or on a periodic tick. Time and jitter come
// from an injected clock and random source ([Options]), so a Supervisor is
// deterministic under a fake clock and a fixed random source, and its tests
// run hours of fake time in milliseconds.
//
// Only connection attempts are retried. A tool call is never retried here:
// a connection lost during a call is the caller's unknown_outcome (the tool
// may have run), and the lost connection is reported with
// [Attempt.Dropped], which schedules a redial, not a repeat of the call.
//
// The schedule, with the default [Policy]:
//
//   - Start-up makes up to 3 attempts. After a failed attempt the next waits
//     1 s, doubling, capped at 8 s, each delay jittered over [¾, 1] of its
//     nominal value so that servers that failed together do not retry
//     together. A failure the caller classifies as not retryable (an HTTP 401
//     or 403: more attempts cannot fix credentials) ends start-up at once.
//   - A server whose attempts are exhausted is Failed ("left out"). It may
//     be probed 30 s later, then at doubling intervals capped at 20 × 30 s
//     = 10 min. Probes happen only when the host asks, that is when there
//     is activity; the supervisor only says whether one is due.
//   - A Ready connection that ends makes the server Degraded: one redial may
//     go at once; if it fails, the series continues with the start-up
//     schedule (Backoff, then Failed).
//   - Five drops of a Ready connection within 60 s open the circuit: the
//     server is Failed with reason "crash loop" and is dialled only on the
//     probe schedule. Until a connection has lived a full 60 s again, a
//     single early drop reopens the circuit and the probe interval keeps
//     doubling.
//   - Stop makes the server Stopped, which is terminal until Reset (config
//     reload, close).
//
// Every "yes, dial" from Acquire is an [Attempt] that holds the permission
// until its outcome is reported, so however often the host asks, the number
// of dials is bounded by the schedule: a server that fails instantly for an
// hour is dialled 12 times with the default policy, never in a spin.
//
// A Supervisor's schedule outlives its process through the host: Schedule
// exports a server's Backoff or Failed state and its next attempt, which the
// host keeps in its store, and Restore puts a new Supervisor back there, so
// that a server in backoff is not dialled by every run of the CLI.
//
// This package imports nothing from Switchboard and nothing outside the
// standard library; it must stay free of I/O.
package supervise
