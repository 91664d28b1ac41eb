package store

import (
	"errors"
	"time"
)

// ErrConflict is returned, possibly wrapped, when a held call's approval
// is not in the state a change expects (it was decided, used or expired
// meanwhile, maybe by another process). Test for it with errors.Is.
var ErrConflict = errors.New("store: approval not in the expected state")

// The states of an Approval. A held call is pending until a person
// approves or denies it or it expires; an approved one is used by the one
// call it was given for.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalUsed     = "used"
	ApprovalExpired  = "expired"
)

// An Approval is a tool call held for a person's approval, bound to that
// exact call by Key (computed by the caller from the caller's identity,
// the flow, the tool and the hash of the arguments).
type Approval struct {
	// ID is the approval's name for people (the CLI, the status page):
	// random, unguessable, made by the caller.
	ID  string
	Key string
	// Tool is the canonical tool ID, Server its server.
	Tool, Server string
	// Caller is the caller's identity ("" for the operator), Flow the
	// flow the call belongs to, ClientName the name the client gave
	// itself, Profile the profile it called through.
	Caller, Flow, ClientName, Profile string
	// ArgsHash is the hash of the arguments; Args the arguments, shown to
	// the person who decides.
	ArgsHash string
	Args     []byte
	// Reason is why the call is held (stable identifiers, comma-
	// separated), Detail the sentence for the person.
	Reason, Detail string
	State          string
	// CreatedAt is when the call was held (zero means "now"); ExpiresAt
	// when a pending or approved approval lapses.
	CreatedAt, ExpiresAt time.Time
	// DecidedBy is who approved or denied it ("ui:operator",
	// "cli:alice", "terminal:alice"), DecidedAt when; UsedAt when the
	// approved call was made.
	DecidedBy         string
	DecidedAt, UsedAt time.Time
}

// ApprovalFilter selects approvals. A zero field does not filter.
type ApprovalFilter struct {
	Key   string
	State string
	Limit int // at most this many, newest first; not positive means DefaultCallLimit
}

// A FlowMark is one label that the results of a flow's calls have carried
// (internal/approval: "private", "untrusted"), with the tool whose result
// carried it. A flow holds each label of each tool once, from the first
// time.
type FlowMark struct {
	Flow, Label, Tool string
	Time              time.Time // zero means "now"
}

// Retention of held calls and flow marks: an approval is forgotten
// ApprovalRetention after it expired, a mark FlowRetention after it was
// made. Each write sweeps what is past its time.
const (
	ApprovalRetention = 7 * 24 * time.Hour
	FlowRetention     = 30 * 24 * time.Hour
)
