package supervise

import "time"

// Policy is the schedule a Supervisor follows. The zero value is the default
// policy; each zero (or negative) field takes the default documented on it.
type Policy struct {
	// Attempts is how many connection attempts start-up makes before the
	// server is Failed; a redial series after a dropped connection makes as
	// many (the immediate redial counts as the first). Default 3; values
	// above 10 count as 10.
	Attempts int

	// BaseDelay is the wait after the first failed attempt; it doubles after
	// each further failure. Default 1 s.
	BaseDelay time.Duration

	// MaxDelay caps the doubling of BaseDelay. Default 8 s; a value below
	// BaseDelay counts as BaseDelay.
	MaxDelay time.Duration

	// RetryAfter is how long a Failed server is left alone before its first
	// probe (config retryMs); each failed probe doubles the wait. Default
	// 30 s.
	RetryAfter time.Duration

	// RetryMaxFactor caps the probe interval at RetryMaxFactor × RetryAfter.
	// Default 20 (10 min with the default RetryAfter); 1 means probes at a
	// fixed RetryAfter.
	RetryMaxFactor int

	// CrashLoops is how many drops of a Ready connection within CrashWindow
	// open the circuit. Default 5.
	CrashLoops int

	// CrashWindow is the window over which drops are counted: a drop counts
	// while it is less than CrashWindow old. It is also how long a
	// connection must live for the server to be trusted again after the
	// circuit opened. Default 60 s.
	CrashWindow time.Duration
}

// Defaults of Policy's fields.
const (
	DefaultAttempts       = 3
	MaxAttempts           = 10
	DefaultBaseDelay      = 1 * time.Second
	DefaultMaxDelay       = 8 * time.Second
	DefaultRetryAfter     = 30 * time.Second
	DefaultRetryMaxFactor = 20
	DefaultCrashLoops     = 5
	DefaultCrashWindow    = 60 * time.Second
)

// withDefaults returns p with every unset field at its default and every
// field in range.
func (p Policy) withDefaults() Policy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	p.Attempts = min(p.Attempts, MaxAttempts)
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	p.MaxDelay = max(p.MaxDelay, p.BaseDelay)
	if p.RetryAfter <= 0 {
		p.RetryAfter = DefaultRetryAfter
	}
	if p.RetryMaxFactor <= 0 {
		p.RetryMaxFactor = DefaultRetryMaxFactor
	}
	if p.CrashLoops <= 0 {
		p.CrashLoops = DefaultCrashLoops
	}
	if p.CrashWindow <= 0 {
		p.CrashWindow = DefaultCrashWindow
	}
	return p
}

// backoff is the wait after the n-th consecutive failed attempt (n ≥ 1):
// BaseDelay doubled n-1 times, capped at MaxDelay, times a jitter factor
// drawn uniformly from [0.75, 1] (r is the draw from [0, 1]).
func (p Policy) backoff(n int, r float64) time.Duration {
	nominal := doubled(p.BaseDelay, n-1, p.MaxDelay)
	r = min(max(r, 0), 1)
	return time.Duration(float64(nominal) * (0.75 + 0.25*r))
}

// probe is the wait before the next probe of a Failed server after k
// earlier waits without a lasting connection: RetryAfter doubled k times,
// capped at RetryMaxFactor × RetryAfter. It is not jittered: probes happen
// only on activity, so there is no herd to spread.
func (p Policy) probe(k int) time.Duration {
	limit := p.RetryAfter * time.Duration(p.RetryMaxFactor)
	if limit/time.Duration(p.RetryMaxFactor) != p.RetryAfter { // overflow
		limit = time.Duration(1<<63 - 1)
	}
	return doubled(p.RetryAfter, k, limit)
}

// doubled is d doubled n times, capped at limit, without overflow.
func doubled(d time.Duration, n int, limit time.Duration) time.Duration {
	for ; n > 0 && d < limit; n-- {
		if d > limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}
