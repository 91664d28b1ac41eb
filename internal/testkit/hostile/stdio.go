package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// stdio serves a server over newline-delimited JSON (MCP 2025-06-18,
// transports §stdio). Each request is answered on its own goroutine, so a
// tool can wait for the client's answer to a request of its own while the
// read loop goes on.
type stdio struct {
	srv *server
	in  io.Reader
	out io.Writer

	wmu sync.Mutex // serialises writes to out: one frame, or one flood, at a time

	mu      sync.Mutex
	nextID  int                      // last id of a request to the client
	pending map[string]chan *message // ids of requests to the client → where the answer goes
}

func newStdio(s *server, in io.Reader, out io.Writer) *stdio {
	return &stdio{srv: s, in: in, out: out, pending: make(map[string]chan *message)}
}

// run serves until in ends, then cancels the requests still being answered
// and waits for them. A flood blocked on a full pipe that nobody reads
// holds the exit, as a real runaway server would: the host must signal.
func (t *stdio) run() error {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	sc := bufio.NewScanner(t.in)
	sc.Buffer(make([]byte, 64<<10), maxFrame)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, bad, ok := decode(line)
		if !ok {
			t.write(responseFrame(json.RawMessage("null"), bad))
			continue
		}
		switch {
		case m.isRequest():
			wg.Go(func() { t.answer(ctx, m) })
		case m.isResponse():
			t.deliver(m)
		case m.Method == "":
			t.write(responseFrame(json.RawMessage("null"), failure(codeInvalidRequest, "Invalid Request")))
		}
		// Notifications (initialized, cancelled, ...) get no answer.
	}
	return sc.Err()
}

// answer handles one request and writes its response.
func (t *stdio) answer(ctx context.Context, m *message) {
	r := t.srv.handle(ctx, m, t)
	if !r.flood {
		t.write(responseFrame(m.ID, r))
		return
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if writeFlood(ctx, t.out, m.ID, r.floodBytes) == nil {
		t.out.Write([]byte{'\n'})
	}
}

// write sends one frame and its newline in a single write. Errors are
// dropped: a reader that went away also closes stdin, which ends run.
func (t *stdio) write(frame []byte) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.out.Write(append(frame, '\n'))
}

// request implements backChannel: it sends a request with an id of its own
// ("hostile-N", never a number, so it cannot collide with the client's)
// and waits for the answer.
func (t *stdio) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan *message, 1)
	t.mu.Lock()
	t.nextID++
	id := fmt.Sprintf("hostile-%d", t.nextID)
	t.pending[id] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, id)
		t.mu.Unlock()
	}()

	t.write(marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver routes a response from the client to the request waiting for it;
// responses to nothing are dropped.
func (t *stdio) deliver(m *message) {
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return
	}
	t.mu.Lock()
	ch := t.pending[id]
	t.mu.Unlock()
	if ch != nil {
		select {
		case ch <- m:
		default: // a second answer to the same id
		}
	}
}
