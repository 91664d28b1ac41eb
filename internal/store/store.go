// Package store is Switchboard's durable state, kept in
// $SWITCHBOARD_HOME/state.db or in PostgreSQL: per upstream server, the catalogue it last
// advertised (so that a restart can offer its tools before dialling it), the
// approved ("pinned") tool definitions that defend against a server quietly
// changing a tool after it was approved (a rug pull), the changed definitions
// held back until someone approves them, an audit log of calls, a trust
// score, the open windows of the call quota, the start-up schedule of
// a server that failed to start (so that the next run does not dial it
// before its next attempt is due), the embedding vectors of tool
// definitions (so that a restart does not compute them again), named
// secrets that every process sharing the store uses alike (the key that
// signs the gateway's request states), the tool calls held for a person's
// approval, and the data-flow labels each flow of calls holds.
//
// The package defines the domain types, the [Store] interface and its
// sentinel errors. store/sqlite implements it in one file, the embedded
// default; store/postgres in a PostgreSQL database that several
// Switchboard processes share. store/storetest holds the tests both pass.
// It knows nothing of MCP: catalogues and definitions are opaque bytes,
// hashes and fingerprints opaque strings, all computed by the caller.
// Keeping it so lets the protocol side change shape without a schema
// migration.
package store

import (
	"context"
	"crypto/rand"
	"errors"
	"time"
)

// ErrNotFound is returned, possibly wrapped, when a looked-up record does not
// exist. Test for it with errors.Is.
var ErrNotFound = errors.New("store: not found")

// DefaultCallLimit is how many rows [Store.Calls] returns when
// [CallFilter.Limit] is not positive.
const DefaultCallLimit = 100

// A Catalog is what a server last advertised, saved under the fingerprint of
// the configuration that produced it: a caller whose current fingerprint
// differs must treat the catalogue as stale.
type Catalog struct {
	Server string
	// Fingerprint is a hash of the server's config and resolved
	// credentials, computed by the caller. It is never a secret itself.
	Fingerprint string
	// Data is the catalogue as JSON, opaque to the store.
	Data []byte
	// SavedAt is when the catalogue was saved; zero means "now" by the
	// store's clock.
	SavedAt time.Time
}

// A Pin is an approved definition: what a tool (or the server's
// instructions) is expected to keep saying, so that a later change can be
// noticed and held back.
type Pin struct {
	Server string
	// Tool is the upstream tool name; "" pins the server's instructions.
	Tool string
	// Hash is of Definition, computed by the caller.
	Hash string
	// Definition is the canonical JSON that was approved, kept so a later
	// change can be shown as a diff.
	Definition []byte
	// ApprovedAt is when the pin was approved; zero means "now".
	ApprovedAt time.Time
}

// A Drift is a definition that differs from its pin, held back until it is
// approved (by pinning it) or the server reverts.
type Drift struct {
	Server, Tool string // as in Pin
	Hash         string // of the new definition
	Definition   []byte
	// SeenAt is when the change was seen; zero means "now".
	SeenAt time.Time
}

// A Call is one row of the audit log. It deliberately holds no argument or
// result values, only their shape and size.
type Call struct {
	ID     int64 // assigned by the store; increases with every call recorded
	Time   time.Time
	Tool   string // canonical ID "server:tool"
	Server string
	// Caller is the caller as it authenticated (a named client, or
	// "sub:<subject>" for a JWT that names none); "" for the operator and
	// callers that cannot be told apart.
	Caller string
	// ClientName is the name the client gave itself (clientInfo.name),
	// as it declared it; "" when it gave none. Never a key.
	ClientName string
	// Profile is the gateway profile the call came through; "" for the
	// whole aggregate.
	Profile string
	// ArgShape lists argument keys and types only, never values; computed
	// by the caller.
	ArgShape string
	Outcome  string // "ok", "tool_error" or "error"
	Code     string // error code, "" when none
	Latency  time.Duration
	BytesIn  int
	BytesOut int
	// Secrets notes the credentials found in the call's arguments and
	// result and what was done with each: "direction:rule:action",
	// comma-separated ("results:github-token:redacted"); never their
	// values. "" when none.
	Secrets string
	// Approval notes a person-in-the-loop decision on the call: "held
	// ID (reasons)", "approved ID by WHO at TIME", "denied ID by WHO at
	// TIME", "expired ID", "flow: ..." (the calls that tainted its flow),
	// "would_hold (reasons)" in report-only mode. "" when none.
	Approval string
	// Run ties a script's tool calls to the script (code mode): the run's
	// ID, on the script's own row and on the row of each call it made; ""
	// for a call made directly.
	Run string
	// As is who the upstream saw the call made by: the subject of the
	// caller's own grant for a server that uses each caller's grants
	// (see [GrantKeeper]); "" when the call used the server's one grant.
	As string
	// Grant is the decision about the caller's own grant, for a server
	// that uses each caller's grants: "own", "exchanged", "needs_login"
	// (refused: the caller has none), or in report-only mode "would_own"
	// and "would_login" (the server's one grant was used); "" otherwise.
	Grant string
}

// CallFilter selects audit rows. A zero field does not filter.
type CallFilter struct {
	Server  string
	Tool    string
	Caller  string
	Outcome string    // "ok", "tool_error", "error", …
	Run     string    // a script's run: its own row and its calls'
	Since   time.Time // calls at or after Since
	Limit   int       // at most this many rows; not positive means DefaultCallLimit
}

// A Quota limits how many calls one key (a client) may make: at most Calls
// in a fixed window of length Per, which opens at the key's first call
// after the previous window closed. Both must be positive.
type Quota struct {
	Calls int
	Per   time.Duration
}

// A Score is a server's trust score. Its meaning and range belong to the
// caller.
type Score struct {
	Server    string
	Value     float64
	UpdatedAt time.Time // zero means "now"
}

// A Schedule is when a server that failed to start may be dialled again,
// kept so that a server in backoff (or left out) stays so across runs. It
// holds under the fingerprint of the configuration it was made with: a
// caller whose current fingerprint differs must ignore it.
type Schedule struct {
	Server      string
	Fingerprint string
	// State is the supervisor's state, "backoff" or "failed"; its meaning
	// belongs to the caller.
	State    string
	Reason   string // why State was entered
	Attempts int    // consecutive failed attempts
	Probes   int    // probes of a failed server without a lasting connection
	// Next is the earliest start of the next attempt.
	Next      time.Time
	LastError string // the last failure, "" when it is not to be kept
	// SavedAt is when the schedule was saved; zero means "now".
	SavedAt time.Time
}

// An Embedding is the vector an embedding model gave the text of a tool
// definition, cached under the model's name and the definition's hash.
type Embedding struct {
	Model string
	Hash  string // of the definition, computed by the caller
	// Vector is the encoded vector, opaque to the store.
	Vector []byte
	// SavedAt is when the vector was saved; zero means "now".
	SavedAt time.Time
}

// Store is Switchboard's state. Implementations are safe for concurrent use.
//
// Deletes are idempotent: deleting what does not exist is not an error.
// Writes that take a zero time store the implementation's "now" instead.
type Store interface {
	// Catalog returns the saved catalogue of server, or ErrNotFound.
	Catalog(ctx context.Context, server string) (*Catalog, error)
	// SaveCatalog replaces the saved catalogue of c.Server.
	SaveCatalog(ctx context.Context, c *Catalog) error
	// DeleteCatalog forgets the catalogue of server.
	DeleteCatalog(ctx context.Context, server string) error

	// Pins returns the pins of server, sorted by Tool.
	Pins(ctx context.Context, server string) ([]Pin, error)
	// Pin inserts or replaces the pin of p.Server and p.Tool. In the same
	// transaction it deletes the drift of that tool if the drift has
	// p.Hash, since approving a drift is pinning its definition; a drift
	// with another hash has changed again since it was shown and stays.
	Pin(ctx context.Context, p Pin) error
	// Unpin deletes the pin of server and tool.
	Unpin(ctx context.Context, server, tool string) error

	// Drifts returns the drifts of server, or of all servers when server
	// is "", sorted by Server then Tool.
	Drifts(ctx context.Context, server string) ([]Drift, error)
	// SaveDrift inserts or replaces the drift of d.Server and d.Tool.
	SaveDrift(ctx context.Context, d Drift) error
	// DeleteDrift deletes the drift of server and tool.
	DeleteDrift(ctx context.Context, server, tool string) error

	// RecordCalls appends cs to the audit log, in order and all or none,
	// and sets each one's ID (and Time, if zero). It also enforces the
	// implementation's retention limits, so the log stays bounded without
	// a separate sweeper. A batch costs far less than its rows one by one.
	RecordCalls(ctx context.Context, cs ...*Call) error
	// Calls returns the audit rows matching f, newest first (by Time,
	// then ID).
	Calls(ctx context.Context, f CallFilter) ([]Call, error)

	// Score returns the trust score of server, or ErrNotFound.
	Score(ctx context.Context, server string) (Score, error)
	// SaveScore inserts or replaces the score of s.Server.
	SaveScore(ctx context.Context, s Score) error

	// TakeQuota admits one call by key under q at now (the caller's
	// clock), atomically across every process sharing the store, so that
	// a quota holds across them. It reports whether the call is admitted
	// and, if not, how long until the key's window closes. A refused call
	// consumes nothing. Closed windows carry no state and are forgotten.
	TakeQuota(ctx context.Context, key string, q Quota, now time.Time) (ok bool, retryAfter time.Duration, err error)

	// Schedule returns the saved start-up schedule of server, or
	// ErrNotFound.
	Schedule(ctx context.Context, server string) (*Schedule, error)
	// SaveSchedule replaces the saved start-up schedule of s.Server.
	SaveSchedule(ctx context.Context, s *Schedule) error
	// DeleteSchedule forgets the start-up schedule of server.
	DeleteSchedule(ctx context.Context, server string) error

	// Embeddings returns the saved embeddings of model for those of
	// hashes that have one, sorted by Hash; a hash without one is left
	// out, not an error.
	Embeddings(ctx context.Context, model string, hashes []string) ([]Embedding, error)
	// SaveEmbeddings inserts or replaces es, all or none.
	SaveEmbeddings(ctx context.Context, es ...Embedding) error

	// Secret returns the secret named name: SecretSize random bytes,
	// made by the first call in any process sharing the store, atomically
	// (concurrent first calls all get the one that was kept), and the same
	// for every call after. A secret is never changed or deleted.
	Secret(ctx context.Context, name string) ([]byte, error)

	// SaveApproval inserts a held call's approval (its ID must be new). A
	// pending one whose Key has a pending approval already is ErrConflict:
	// of two processes holding the same call at once, one holds it.
	SaveApproval(ctx context.Context, a *Approval) error
	// Approval returns the approval id, or ErrNotFound.
	Approval(ctx context.Context, id string) (*Approval, error)
	// Approvals returns the approvals matching f, newest first.
	Approvals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// MoveApproval changes approval id's state from from to to,
	// atomically across every process sharing the store, and returns it
	// as it is then. A move to approved or denied records by and at as
	// DecidedBy and DecidedAt and gives the decision as long from at as
	// the hold had from its creation (ExpiresAt becomes at + ExpiresAt -
	// CreatedAt); a move to used records at as UsedAt. It
	// returns ErrNotFound when there is no such approval and ErrConflict
	// when its state is not from: of two people deciding at once, or two
	// calls using one approval, one wins.
	MoveApproval(ctx context.Context, id, from, to, by string, at time.Time) (*Approval, error)

	// MarkFlow records ms (a mark already held is kept as it was).
	MarkFlow(ctx context.Context, ms ...FlowMark) error
	// FlowMarks returns the marks of flow, oldest first.
	FlowMarks(ctx context.Context, flow string) ([]FlowMark, error)

	// Close releases the store. Other methods must not be called after it.
	Close() error
}

// SecretSize is the length in bytes of a secret made by [Store.Secret].
const SecretSize = 32

// NewSecret returns SecretSize bytes from crypto/rand, a candidate for
// [Store.Secret] to keep.
func NewSecret() []byte {
	b := make([]byte, SecretSize)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// RetryAfter is how long a call refused under q at now (Unix nanoseconds)
// waits for the window that opened at start to close: never longer than
// one window, even when the clock has stepped back past start.
func RetryAfter(q Quota, start, now int64) time.Duration {
	return q.Per - max(time.Duration(now-start), 0)
}

// Topics of the change feed (see [Notifier]).
const (
	// TopicPins is told, with the server's name as payload, whenever the
	// pins or drifts of a server change: an approval, a held definition,
	// an unpin. Stores that implement Notifier send it themselves, in the
	// transaction of the write.
	TopicPins = "switchboard_pins"
	// TopicConfig is told when a process reloaded its configuration; the
	// payload identifies that process, so that it can ignore its own.
	TopicConfig = "switchboard_config"
)

// A Change is one notice of the change feed. Notices are hints to read
// the store again, never the data itself: a process that missed some (its
// connection to the store was lost) receives one Change with Missed set
// once it is back, and must then re-read everything it keeps.
type Change struct {
	Topic   string // "" when Missed
	Payload string
	Missed  bool
}

// Notifier is an optional ability of a Store shared by several processes:
// a change feed between them. store/postgres has it (LISTEN/NOTIFY);
// store/sqlite, whose file belongs to one process at a time, has not.
type Notifier interface {
	// Notify tells every listener of topic, in every process, payload.
	Notify(ctx context.Context, topic, payload string) error
	// Listen returns the notices of topics, including this process's own,
	// until ctx ends; then the channel is closed. The connection it holds
	// is its own, and is made again (with backoff) when it is lost; each
	// time, a Change with Missed set follows. Listen fails only if the
	// first connection cannot be made.
	Listen(ctx context.Context, topics ...string) (<-chan Change, error)
}

// Pinger is an optional ability of a Store: a cheap check that it is
// reachable, for readiness probes.
type Pinger interface {
	Ping(ctx context.Context) error
}
