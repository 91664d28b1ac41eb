package store

import "time"

// Options configure an implementation's DB. A nil *Options means all
// defaults.
type Options struct {
	// Now is the clock, used for zero times given to writes and for
	// retention by age. Nil means time.Now.
	Now func() time.Time

	// MaxCalls bounds the audit log by count: RecordCalls deletes the
	// calls older than the last MaxCalls inserted (by ID). Where several
	// processes share a database, it holds at most MaxCalls rows plus
	// those the others are inserting at that moment. Zero means
	// DefaultMaxCalls; negative means no bound.
	MaxCalls int

	// MaxCallAge bounds the audit log by age: RecordCalls deletes calls
	// whose Time is older than MaxCallAge before now. Zero means
	// DefaultMaxCallAge; negative means no bound.
	MaxCallAge time.Duration
}

// Defaults of Options.
const (
	DefaultMaxCalls   = 10_000
	DefaultMaxCallAge = 30 * 24 * time.Hour
)
