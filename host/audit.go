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
// waits for the disk; when the queue is full, rows are dropped and
// counted.

// auditQueue bounds the audit log's queue; a call never waits for it.
const auditQueue = 1024

// auditLog queues audit rows and writes them to the store on its own
// goroutine, which close ends and waits for. It has no lock: recording is
// one non-blocking send. A nil *auditLog records nothing (a host without a
// store).
type auditLog struct {
	store store.Store
	log   *slog.Logger
	queue chan *store.Call // never closed: a late record must not panic
	quit  chan struct{}    // closed by close: write drains the queue and ends
	done  chan struct{}    // closed when write has ended
	once  sync.Once

	dropped atomic.Int64 // rows dropped because the queue was full
}

// newAuditLog starts the writer of an audit log over st; nil when st is.
func newAuditLog(st store.Store, log *slog.Logger) *auditLog {
	if st == nil {
		return nil
	}
	a := &auditLog{store: st, log: log, queue: make(chan *store.Call, auditQueue), quit: make(chan struct{}), done: make(chan struct{})}
	go a.write()
	return a
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

// close writes the rows queued and stops the writer.
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
// reaches the store at most auditLinger after its call ends; close writes
// the rest.
const (
	auditBatch  = 256
	auditLinger = 100 * time.Millisecond
)

// write writes queued rows in batches until close, then those still
// queued.
func (a *auditLog) write() {
	defer close(a.done)
	batch := make([]*store.Call, 0, auditBatch)
	flush := func() {
		if len(batch) > 0 {
			a.put(batch)
			clear(batch)
			batch = batch[:0]
		}
	}
	linger := time.NewTimer(auditLinger)
	linger.Stop()
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
		case <-a.quit:
			linger.Stop()
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
			if n := a.dropped.Load(); n > 0 {
				a.log.Warn("audit rows dropped: the queue was full", "rows", n)
			}
			return
		}
		flush()
	}
}

func (a *auditLog) put(batch []*store.Call) {
	if err := a.store.RecordCalls(context.Background(), batch...); err != nil {
		a.log.Warn("audit rows not written", "rows", len(batch), "first", batch[0].Tool, "err", err)
	}
}

// callRecord describes a finished call.
func callRecord(server, tool string, catalogued bool, client string, args []byte, start time.Time, res *Result, err error) CallRecord {
	c := CallRecord{
		Start: start, Latency: time.Since(start), Client: client,
		Server: server, Tool: tool, Catalogued: catalogued, BytesIn: len(args),
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
	return c
}

// auditRow is the audit log's row for a call.
func auditRow(c *CallRecord, args []byte) *store.Call {
	return &store.Call{
		Time: c.Start, Tool: c.Tool, Server: c.Server, Caller: c.Client,
		ArgShape: argShape(args), Latency: c.Latency, BytesIn: c.BytesIn, BytesOut: c.BytesOut,
		Outcome: c.Outcome, Code: c.Code,
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
