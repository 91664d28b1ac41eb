package host

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Audit log: one row per call, written by one goroutine so a call never
// waits for the store. Rows that the store refused (it is unreachable, its
// disk is full) are kept and retried, in order, as soon as the store is
// seen to answer again (nudge) and at least every auditRetryMax; rows are
// lost only when a queue is full while the store still refuses them, and
// then counted. While rows wait, storeUp and readiness say so.

const (
	// auditQueue bounds the queue between calls and the writer; a call
	// never waits for it.
	auditQueue = 1024
	// auditPending bounds the rows kept for retry while the store is
	// unreachable; past it the oldest are dropped, and counted.
	auditPending = 10_000
	// A failed write is retried after auditRetryMin, doubling up to
	// auditRetryMax while the store stays unreachable; any sign that the
	// store answers again retries at once (nudge).
	auditRetryMin = 250 * time.Millisecond
	auditRetryMax = time.Second
	// auditPutTimeout bounds one write, so that a store that hangs is
	// treated as unreachable.
	auditPutTimeout = 10 * time.Second
)

// auditLog queues audit rows and writes them to the store on its own
// goroutine, which close ends and waits for. It has no lock: recording is
// one non-blocking send, and the rows awaiting retry belong to the writer.
// A nil *auditLog records nothing (a host without a store).
type auditLog struct {
	store   store.Store
	log     *slog.Logger
	reached func(error) // told the outcome of every write: the store's health
	maxWait int         // bound of the rows awaiting retry; auditPending but in tests
	// retryMin and retryMax are auditRetryMin and auditRetryMax but in
	// tests; fixed before write starts.
	retryMin, retryMax time.Duration
	queue              chan *store.Call // never closed: a late record must not panic
	wake               chan struct{}    // nudge: the store answered; retry now (buffered 1)
	quit               chan struct{}    // closed by close: write drains the queue and ends
	done               chan struct{}    // closed when write has ended
	once               sync.Once

	dropped atomic.Int64 // rows lost: a queue was full, or recorded after close
	waiting atomic.Int64 // rows awaiting retry (the writer's pending), for metrics
}

// newAuditLog starts the writer of an audit log over st; nil when st is.
// reached, if not nil, is told the outcome of each write to st.
func newAuditLog(st store.Store, log *slog.Logger, reached func(error)) *auditLog {
	if st == nil {
		return nil
	}
	a := newAuditLogStopped(st, log, reached)
	go a.write()
	return a
}

// newAuditLogStopped is newAuditLog without starting the writer, for tests
// that change its bounds first.
func newAuditLogStopped(st store.Store, log *slog.Logger, reached func(error)) *auditLog {
	if reached == nil {
		reached = func(error) {}
	}
	return &auditLog{store: st, log: log, reached: reached, maxWait: auditPending,
		retryMin: auditRetryMin, retryMax: auditRetryMax,
		queue: make(chan *store.Call, auditQueue), wake: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
}

// nudge tells the writer that the store answered a request: rows waiting
// for retry are written now rather than at the end of the backoff. It
// never blocks.
func (a *auditLog) nudge() {
	if a == nil || a.waiting.Load() == 0 {
		return
	}
	select {
	case a.wake <- struct{}{}:
	default: // one is pending already
	}
}

// on reports whether rows are kept, so that a caller can skip building one.
func (a *auditLog) on() bool { return a != nil }

// record queues a row; it never blocks. A row recorded after close is
// dropped and counted.
func (a *auditLog) record(c *store.Call) {
	if a == nil {
		return
	}
	select {
	case <-a.quit:
		a.dropped.Add(1)
		return
	default:
	}
	select {
	case a.queue <- c:
	default:
		a.dropped.Add(1)
	}
}

// close writes the rows queued and stops the writer. Rows that the store
// still refuses then are dropped and counted.
func (a *auditLog) close() {
	if a == nil {
		return
	}
	a.once.Do(func() { close(a.quit) })
	<-a.done
}

// The writer gathers rows into one transaction: what is queued, and what
// arrives within auditLinger of the first, up to auditBatch rows. A row
// alone costs a whole transaction (about 150 µs of CPU on SQLite, as much
// as the rest of a call through the gateway); in a batch of 256 it costs
// about 12 µs (BenchmarkRecordCalls in internal/store/sqlite). A row
// reaches the store at most auditLinger after its call ends, while the
// store is reachable; close writes the rest.
const (
	auditBatch  = 256
	auditLinger = 100 * time.Millisecond
)

// write writes queued rows in batches until close, then those still
// queued. Rows the store refused wait in pending, oldest first, and go
// before any newer row. While it writes them, rows queued meanwhile join
// pending, so that catching up after an outage does not overflow the
// queue.
func (a *auditLog) write() {
	defer close(a.done)
	batch := make([]*store.Call, 0, auditBatch) // gathered, not yet tried
	var pending []*store.Call                   // refused, oldest first
	backoff := a.retryMin
	retry := time.NewTimer(backoff)
	retry.Stop()
	linger := time.NewTimer(auditLinger)
	linger.Stop()
	// wait moves the batch to the end of pending.
	wait := func() {
		pending = append(pending, batch...)
		clear(batch)
		batch = batch[:0]
		linger.Stop()
	}
	// drain writes pending in batches, taking in the rows queued
	// meanwhile (up to the bound); it reports whether all are written. A
	// drain that empties pending stops the retry timer.
	drain := func() bool {
		wait()
		for len(pending) > 0 {
			n := min(len(pending), auditBatch)
			if !a.put(pending[:n]) {
				a.waiting.Store(int64(len(pending)))
				return false
			}
			clear(pending[:n])
			pending = pending[n:]
		take:
			for len(pending) < a.maxWait {
				select {
				case c := <-a.queue:
					pending = append(pending, c)
				default:
					break take
				}
			}
			a.waiting.Store(int64(len(pending)))
		}
		pending = nil
		retry.Stop()
		return true
	}
	// retryLater schedules the next retry after a failed drain.
	retryLater := func() {
		backoff = min(backoff*2, a.retryMax)
		retry.Reset(backoff)
	}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if len(pending) == 0 {
			if a.put(batch) {
				clear(batch)
				batch = batch[:0]
				return
			}
			backoff = a.retryMin
			retry.Reset(backoff)
		}
		wait()
		// Rows past the bound are dropped only if the store still
		// refuses them: it may be back before anything said so.
		if len(pending) > a.maxWait && !drain() {
			retryLater()
		}
		if over := len(pending) - a.maxWait; over > 0 {
			a.dropped.Add(int64(over))
			clear(pending[:over])
			pending = pending[over:]
		}
		a.waiting.Store(int64(len(pending)))
	}
	for {
		select {
		case c := <-a.queue:
			if batch = append(batch, c); len(batch) == 1 {
				linger.Reset(auditLinger)
			}
			if len(batch) < auditBatch {
				continue
			}
			linger.Stop()
		case <-linger.C:
		case <-retry.C:
			if !drain() {
				retryLater()
			}
			continue
		case <-a.wake:
			if len(pending) > 0 && !drain() {
				retryLater()
			}
			continue
		case <-a.quit:
			linger.Stop()
			retry.Stop()
			for {
				select {
				case c := <-a.queue:
					if batch = append(batch, c); len(batch) == auditBatch {
						flush()
					}
					continue
				default:
				}
				break
			}
			flush()
			if !drain() {
				a.dropped.Add(int64(len(pending)))
				a.waiting.Store(0)
			}
			if n := a.dropped.Load(); n > 0 {
				a.log.Warn("audit rows dropped: a queue was full, or the store unreachable at close", "rows", n)
			}
			return
		}
		flush()
	}
}

// put writes batch, and reports whether it was written.
func (a *auditLog) put(batch []*store.Call) bool {
	ctx, cancel := context.WithTimeout(context.Background(), auditPutTimeout)
	defer cancel()
	err := a.store.RecordCalls(ctx, batch...)
	a.reached(err)
	if err != nil {
		a.log.Warn("audit rows not written yet; kept for retry", "rows", len(batch), "first", batch[0].Tool, "err", err)
		return false
	}
	return true
}

// callRecord describes a finished call.
func callRecord(server, tool string, catalogued bool, opts *CallOptions, args []byte, start time.Time, res *Result, err error) CallRecord {
	c := CallRecord{
		Start: start, Latency: time.Since(start),
		Server: server, Tool: tool, Catalogued: catalogued, BytesIn: len(args),
	}
	if opts != nil {
		c.Client, c.Profile, c.ClientName = opts.Client, opts.Profile, opts.ClientName
		c.Gate, c.Approval = opts.gate.decision, opts.gate.note
	}
	switch {
	case err != nil:
		c.Outcome, c.Code = outcomeError, string(fault.CodeOf(err))
		if c.Code == "" && errors.Is(err, context.Canceled) {
			c.Code = "cancelled"
		}
	case res.IsError:
		c.Outcome, c.BytesOut = outcomeToolErr, len(res.Raw)
	default:
		c.Outcome, c.BytesOut = outcomeOK, len(res.Raw)
	}
	if res != nil {
		c.Secrets, c.As, c.Grant = res.secrets, res.as, res.grant
	}
	if server != "" && errors.Is(err, ErrOwnLogin) {
		c.Grant = GrantNeedsLogin
	}
	return c
}

// auditRow is the audit log's row for a call.
func auditRow(c *CallRecord, args []byte) *store.Call {
	return &store.Call{
		Time: c.Start, Tool: c.Tool, Server: c.Server, Caller: c.Client, ClientName: c.ClientName, Profile: c.Profile,
		ArgShape: argShape(args), Latency: c.Latency, BytesIn: c.BytesIn, BytesOut: c.BytesOut,
		Outcome: c.Outcome, Code: c.Code, Secrets: secretsNote(c.Secrets), Approval: c.Approval, Run: c.Run, As: c.As, Grant: c.Grant,
	}
}

// argShape describes a call's arguments by their keys and JSON types,
// never their values: {"path":"string","recursive":"boolean"}. It is what
// the audit log keeps.
func argShape(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	type member struct{ key, typ string }
	var ms []member
	end, err := jsonscan.Object(args, jsonscan.SkipSpace(args, 0), func(m jsonscan.Member) (int, error) {
		end, _, err := jsonscan.Skip(args, m.Value, 1)
		if err == nil {
			ms = append(ms, member{string(m.Key), jsonType(args[m.Value:end])})
		}
		return end, err
	})
	if err != nil || jsonscan.SkipSpace(args, end) != len(args) {
		return "(not an object)"
	}
	// Sorted by key; a key written twice counts once, with its last value,
	// as a decoder reads it.
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(m.key)
		b.Write(kb)
		b.WriteString(`:"` + m.typ + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

func jsonType(v json.RawMessage) string {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		}
		return "number"
	}
	return "null"
}
