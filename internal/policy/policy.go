// Package policy decides whether Switchboard may make a tool call: ordered
// allow/deny rules over canonical tool IDs, a per-client call quota, and
// whether the user must confirm the call first, judged from the tool's MCP
// annotations and how far its server is trusted.
//
// A call flows CLI or gateway → registry → policy → upstream; the registry
// asks an [Engine] for a [Decision] before it forwards anything. Policy is
// pure computation: it does no I/O, starts no goroutines and logs nothing,
// so it can be called on every call and tested with a fake clock.
//
// Canonical tool IDs ("server:tool") are matched as opaque strings, because
// server names may themselves contain ':'; see [Glob].
//
// This package imports nothing from Switchboard and nothing outside the
// standard library; in particular not go-sdk, so [Annotations] is its own.
package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Action is what a rule, or the default, does with a call it matches.
type Action string

const (
	Allow Action = "allow"
	Deny  Action = "deny"
)

// Rule is one ordered authorization rule. Pattern is a glob over canonical
// tool IDs with the syntax of [Glob]: '*' matches any run of characters
// (including ':'), '?' one character, '[...]' classes as in path.Match, and
// '\\' escapes. [New] rejects malformed patterns with a [*RuleError] naming
// the index and pattern.
//
// Clients and Profiles, when not empty, limit the rule to calls from the
// named gateway clients ([Request.Caller]) and through the named profiles
// ([Request.Profile]); a rule limited so never matches a call that does
// not name one of them.
type Rule struct {
	Action   Action
	Pattern  string
	Clients  []string
	Profiles []string
}

// String returns the rule as an operator would write it: "deny gh:delete_*",
// "deny gh:* clients=ci profiles=ro,dev".
func (r Rule) String() string {
	s := string(r.Action) + " " + r.Pattern
	if len(r.Clients) > 0 {
		s += " clients=" + strings.Join(r.Clients, ",")
	}
	if len(r.Profiles) > 0 {
		s += " profiles=" + strings.Join(r.Profiles, ",")
	}
	return s
}

// applies reports whether r's client and profile limits admit req.
func (r *compiledRule) applies(caller, profile string) bool {
	return (r.clients == nil || slices.Contains(r.clients, caller)) &&
		(r.profiles == nil || slices.Contains(r.profiles, profile))
}

// Confirm says when a permitted call must first be confirmed by the user.
type Confirm string

const (
	// ConfirmNever never asks.
	ConfirmNever Confirm = "never"
	// ConfirmDestructive asks when [Effective] says the tool may be
	// destructive, which is always for a server that is not trusted.
	ConfirmDestructive Confirm = "destructive"
	// ConfirmAlways asks before every call.
	ConfirmAlways Confirm = "always"
)

// Quota limits how many calls each key may make. Keys are [Request.Client]:
// "" for the process itself, or a gateway client's ID.
type Quota struct {
	// Calls is the most calls a key may make per window; 0 means
	// unlimited, and then the other fields are ignored.
	Calls int
	// Per is the window length; it must be positive when Calls is. A
	// window opens at a key's first call and is fixed, so a key may make
	// up to 2×Calls calls across a window boundary.
	Per time.Duration
	// MaxKeys bounds the keys tracked at once; 0 means [DefaultMaxKeys].
	// Past it the key with the oldest window is forgotten (and so starts
	// afresh), which keeps memory bounded whatever clients do.
	MaxKeys int
}

// Config configures an [Engine]. The zero Config permits every call.
type Config struct {
	// Rules are tried in order and the first whose pattern matches the
	// tool ID decides; nil means none.
	Rules []Rule
	// Default decides calls that no rule matches; "" means Allow.
	Default Action
	// Confirm says when a permitted call needs confirmation; "" means
	// ConfirmNever.
	Confirm Confirm
	// Quota limits calls per client; the zero Quota means unlimited.
	Quota Quota
	// Now is the clock for quota windows; nil means time.Now.
	Now func() time.Time
	// Counter, when not nil, keeps the quota's windows instead of the
	// Engine's memory, so that every process sharing it shares the quota
	// (and counts survive a new Engine). Nil counts in memory.
	Counter Counter
}

// A Counter keeps quota windows outside the Engine: the host's state
// store, shared by several processes. Take admits one call by key under
// the quota at now, with the same fixed-window rule as the Engine's own
// count, or reports how long until the key's window closes. When it
// fails, the Engine counts the call in its own memory instead, so that a
// lost store neither blocks every call nor lifts the quota.
type Counter interface {
	Take(key string, q Quota, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// RuleError reports a rule that cannot be compiled.
type RuleError struct {
	Index int
	Rule  Rule
	Err   error // a *PatternError, or what is wrong with the action
}

func (e *RuleError) Error() string {
	var pe *PatternError
	if errors.As(e.Err, &pe) {
		return fmt.Sprintf("policy: rule %d pattern %q: %s at offset %d", e.Index, e.Rule.Pattern, pe.Problem, pe.Offset)
	}
	return fmt.Sprintf("policy: rule %d %q: %v", e.Index, e.Rule.String(), e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Validate reports every problem with c, joined, without building an
// Engine; a config loader can call it to fail early.
func (c Config) Validate() error {
	_, err := c.compile()
	return err
}

type compiledRule struct {
	action            Action
	glob              Glob
	clients, profiles []string // nil: any
	detail            string   // Decision.Detail when this rule denies, built once
}

func compileRules(rules []Rule) ([]compiledRule, error) {
	out := make([]compiledRule, len(rules))
	var errs []error
	for i, r := range rules {
		var err error
		switch {
		case r.Action != Allow && r.Action != Deny:
			err = fmt.Errorf("action %q is neither %q nor %q", r.Action, Allow, Deny)
		case r.Pattern == "":
			// It would match only the empty ID, which no tool has: a
			// mistake, and for a deny rule a silent one.
			err = errors.New("empty pattern")
		default:
			out[i].glob, err = CompileGlob(r.Pattern)
		}
		if err != nil {
			errs = append(errs, &RuleError{Index: i, Rule: r, Err: err})
			continue
		}
		out[i].action = r.Action
		if len(r.Clients) > 0 {
			out[i].clients = slices.Clone(r.Clients)
		}
		if len(r.Profiles) > 0 {
			out[i].profiles = slices.Clone(r.Profiles)
		}
		out[i].detail = fmt.Sprintf("denied by rule %d %q", i, r.String())
	}
	if errs != nil {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Engine makes decisions under one Config. It is safe for concurrent use.
// To change policy, build a new Engine and swap it in; quota counts do not
// carry over, unless a Counter keeps them.
type Engine struct {
	// Fixed at New, read without locking.
	rules   []compiledRule
	deflt   Action
	confirm Confirm
	now     func() time.Time
	limit   *limiter // nil when unlimited; it has its own lock
	counter Counter  // nil: limit alone counts
	quota   Quota    // for Detail text
}

// New compiles c into an Engine, or reports everything wrong with it.
func New(c Config) (*Engine, error) { return c.compile() }

// compile is New and Validate: it checks every field and reports all the
// problems at once, so an operator fixes a config in one pass.
func (c Config) compile() (*Engine, error) {
	rules, err := compileRules(c.Rules)
	errs := []error{err}
	switch c.Default {
	case "", Allow, Deny:
	default:
		errs = append(errs, fmt.Errorf("policy: default action %q is neither %q nor %q", c.Default, Allow, Deny))
	}
	switch c.Confirm {
	case "", ConfirmNever, ConfirmDestructive, ConfirmAlways:
	default:
		errs = append(errs, fmt.Errorf("policy: confirm mode %q is not %q, %q or %q", c.Confirm, ConfirmNever, ConfirmDestructive, ConfirmAlways))
	}
	q := c.Quota
	switch {
	case q.Calls < 0:
		errs = append(errs, fmt.Errorf("policy: quota calls %d is negative", q.Calls))
	case q.Calls > 0 && q.Per <= 0:
		errs = append(errs, fmt.Errorf("policy: quota of %d calls needs a positive period, got %v", q.Calls, q.Per))
	}
	if q.MaxKeys < 0 {
		errs = append(errs, fmt.Errorf("policy: quota max keys %d is negative", q.MaxKeys))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	e := &Engine{
		rules:   rules,
		deflt:   c.Default,
		confirm: c.Confirm,
		now:     c.Now,
		counter: c.Counter,
		quota:   q,
	}
	if e.deflt == "" {
		e.deflt = Allow
	}
	if e.confirm == "" {
		e.confirm = ConfirmNever
	}
	if e.now == nil {
		e.now = time.Now
	}
	if q.Calls > 0 {
		e.limit = newLimiter(q)
	}
	return e, nil
}

// Request is one tool call to decide.
type Request struct {
	ID          string       // canonical tool ID
	Trust       Trust        // of the tool's server; "" is treated as Untrusted
	Annotations *Annotations // as the server declared them; nil if none
	Client      string       // quota key: "" is the process itself
	// Caller is the gateway client's configured name, and Profile the
	// profile it called through; "" for none. Rules limited to clients or
	// profiles match on them.
	Caller, Profile string
	// Counted says the call was already counted against the quota (this
	// is a second decision for the same call, after its definition
	// changed): no slot is taken again.
	Counted bool
}

// Verdict is the outcome of a decision.
type Verdict string

const (
	Permit  Verdict = "permit"  // make the call
	Refuse  Verdict = "refuse"  // do not make it; tell the caller Detail
	AskUser Verdict = "confirm" // make it only if the user confirms
)

// Decision reasons. They are stable identifiers for logs, metrics and
// tests; Detail is the text for people.
const (
	ReasonRule          = "rule"           // a deny rule matched
	ReasonDefaultDeny   = "default_deny"   // no rule matched and the default is deny
	ReasonQuota         = "quota"          // the client's quota is spent
	ReasonDestructive   = "destructive"    // the tool may be destructive
	ReasonAlwaysConfirm = "always_confirm" // every call needs confirmation
)

// Decision is the answer for one Request.
type Decision struct {
	Verdict Verdict
	// Reason is one of the Reason constants, or "" for Permit.
	Reason string
	// Rule is the index of the rule that matched the ID, whatever the
	// verdict, or -1 if none did.
	Rule int
	// Detail explains a Refuse or AskUser to a person, e.g.
	// `denied by rule 2 "deny github:delete_*"`; "" for Permit.
	Detail string
	// RetryAfter is how long until the quota admits another call from
	// this client, when Reason is ReasonQuota.
	RetryAfter time.Duration
}

// Static Detail texts, so that deciding does not allocate.
const (
	detailDefaultDeny      = "no rule allows this tool and the default is deny"
	detailAlways           = "every tool call needs confirmation"
	detailDestructiveTrust = "the tool is not annotated read-only or non-destructive"
	detailDestructiveOther = "the server is not trusted to call its tools safe, so they may be destructive"
)

// Match reports the index of the first rule matching id, or -1, and the
// action that applies, for a call by no named client through no profile
// (rules limited to clients or profiles are skipped). Unlike Decide it
// consumes no quota, so it suits "which rule covers this tool?" questions
// from a CLI or a dry run.
func (e *Engine) Match(id string) (rule int, action Action) {
	return e.match(id, "", "")
}

func (e *Engine) match(id, caller, profile string) (rule int, action Action) {
	for i := range e.rules {
		if e.rules[i].applies(caller, profile) && e.rules[i].glob.Match(id) {
			return i, e.rules[i].action
		}
	}
	return -1, e.deflt
}

// Decide evaluates the rules, then the quota, then confirmation. A call
// refused by a rule consumes no quota; a call that is permitted or needs
// confirmation does, even if the user then declines, since the quota bounds
// what a client may ask for. Deciding a permitted call does not allocate
// unless the quota meets a new client (or is kept by a Counter).
func (e *Engine) Decide(r Request) Decision {
	idx, action := e.match(r.ID, r.Caller, r.Profile)
	if action == Deny {
		if idx < 0 {
			return Decision{Verdict: Refuse, Reason: ReasonDefaultDeny, Rule: -1, Detail: detailDefaultDeny}
		}
		return Decision{Verdict: Refuse, Reason: ReasonRule, Rule: idx, Detail: e.rules[idx].detail}
	}
	if e.limit != nil && !r.Counted {
		if ok, retry := e.take(r.Client); !ok {
			return Decision{Verdict: Refuse, Reason: ReasonQuota, Rule: idx, Detail: e.quotaDetail(retry), RetryAfter: retry}
		}
	}
	switch e.confirm {
	case ConfirmAlways:
		return Decision{Verdict: AskUser, Reason: ReasonAlwaysConfirm, Rule: idx, Detail: detailAlways}
	case ConfirmDestructive:
		if _, destructive := Effective(r.Annotations, r.Trust); destructive {
			d := Decision{Verdict: AskUser, Reason: ReasonDestructive, Rule: idx, Detail: detailDestructiveOther}
			if r.Trust == Trusted {
				d.Detail = detailDestructiveTrust
			}
			return d
		}
	}
	return Decision{Verdict: Permit, Rule: idx}
}

// take admits one call by key: through the Counter when there is one and
// it answers, else in the Engine's memory.
func (e *Engine) take(key string) (bool, time.Duration) {
	now := e.now()
	if e.counter != nil {
		if ok, retry, err := e.counter.Take(key, e.quota, now); err == nil {
			return ok, retry
		}
	}
	return e.limit.take(key, now)
}

func (e *Engine) quotaDetail(retry time.Duration) string {
	calls := "calls"
	if e.quota.Calls == 1 {
		calls = "call"
	}
	return fmt.Sprintf("quota: %d %s per %v exceeded; retry in %v", e.quota.Calls, calls, e.quota.Per, roundUp(retry))
}

// roundUp rounds d up to a whole second, or to a whole millisecond below a
// second, so that a client that waits as long as it is told is admitted.
func roundUp(d time.Duration) time.Duration {
	unit := time.Second
	if d < time.Second {
		unit = time.Millisecond
	}
	if r := d % unit; r != 0 {
		d += unit - r
	}
	return d
}
