package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// A command other than serve waits for a starting server only briefly
// (startupWait) and stops it when it ends: a server that hangs at
// initialize would be "starting" at every command, and never time out.
// So the time each command gave a server that it left starting is added
// up in the store, under the server's fingerprint, as a start-up schedule
// of state "starting" whose reason is "under way DURATION" and whose
// attempts count the commands. Once the sum reaches the server's
// startupTimeoutMs, the schedule becomes "failed": the host restores it
// as any failed start-up, so the server is reported failing and is not
// started again before its next probe. A start that succeeds or fails
// replaces the record (host.keepSchedule).

// stateStarting is the state of the schedule that adds up a server's
// start-up time across commands.
const stateStarting = "starting"

// underWay prefixes the reason of a schedule in stateStarting.
const underWay = "under way "

// cutShort is a server a command leaves still starting: its name, and
// when it started.
type cutShort struct {
	name  string
	since time.Time
}

// stillStarting returns the servers of r's host still starting.
func (r *run) stillStarting() []cutShort {
	if r.serving() {
		return nil // it waits for them as long as they take
	}
	var out []cutShort
	for _, s := range r.host.Servers() {
		if s.State == host.StateStarting {
			out = append(out, cutShort{s.Name, s.Since})
		}
	}
	return out
}

// keepStartTime adds the time the run gave each server in left to what
// earlier commands gave it, once the host is closed (its own record of an
// outcome comes first), and marks the server failed once the sum reaches
// its startupTimeoutMs.
func (r *run) keepStartTime(left []cutShort) {
	if len(left) == 0 || r.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := time.Now()
	for _, c := range left {
		sc := r.cfg.Server(c.name)
		if sc == nil {
			continue
		}
		sch := nextSchedule(r.priorSchedule(ctx, sc), sc, now.Sub(c.since), now)
		if err := r.store.SaveSchedule(ctx, sch); err != nil && r.verbose {
			fmt.Fprintf(r.env.Stderr, "switchboard: the start-up time of %q was not kept: %v\n", c.name, err)
		}
	}
}

// priorSchedule is the schedule kept for sc under its fingerprint, or
// nil.
func (r *run) priorSchedule(ctx context.Context, sc *config.Server) *store.Schedule {
	sch, err := r.store.Schedule(ctx, sc.Name)
	if err != nil || sch.Fingerprint != sc.Fingerprint() {
		return nil
	}
	return sch
}

// nextSchedule is the schedule of sc after a command gave it ran of its
// start-up at now and stopped it, prior being what was kept (nil:
// nothing).
func nextSchedule(prior *store.Schedule, sc *config.Server, ran time.Duration, now time.Time) *store.Schedule {
	sch := &store.Schedule{Server: sc.Name, Fingerprint: sc.Fingerprint(), State: stateStarting, Attempts: 1}
	total := ran
	if prior != nil {
		switch prior.State {
		case stateStarting:
			if d, err := time.ParseDuration(strings.TrimPrefix(prior.Reason, underWay)); err == nil && strings.HasPrefix(prior.Reason, underWay) {
				total += d
			}
			sch.Attempts = prior.Attempts + 1
		case "failed":
			// Probed again and still hanging: failed, probed later.
			sch.State, sch.Reason, sch.LastError = prior.State, prior.Reason, prior.LastError
			sch.Attempts, sch.Probes = prior.Attempts, prior.Probes+1
			sch.Next = now.Add(probeAfter(sc, sch.Probes))
			return sch
		}
	}
	if total < sc.StartupTimeout {
		sch.Reason = underWay + total.Round(time.Millisecond).String()
		return sch
	}
	msg := fmt.Sprintf("did not finish starting within %s (startupTimeoutMs): %d commands gave it %s in all, each stopping it sooner",
		sc.StartupTimeout, sch.Attempts, total.Round(100*time.Millisecond))
	sch.State, sch.Reason, sch.LastError = "failed", msg, msg
	sch.Attempts = max(sc.Lifecycle.StartupAttempts, 1)
	sch.Next = now.Add(probeAfter(sc, 0))
	return sch
}

// probeAfter is how long after its probes-th probe a failed server is
// probed again: retryMs, doubled at each probe, up to 20 times it.
func probeAfter(sc *config.Server, probes int) time.Duration {
	base := sc.Lifecycle.RetryAfter
	if base <= 0 {
		base = 30 * time.Second
	}
	d := base
	for range min(probes, 5) {
		d *= 2
	}
	return min(d, 20*base)
}
