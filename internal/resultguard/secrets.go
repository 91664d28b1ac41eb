package resultguard

import (
	"encoding/json"
	"math"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/internal/secretscan"
)

// Credentials in a result (internal/secretscan) are found in the text of
// its content blocks (and of embedded text resources) and in every string
// value of its structuredContent. A credential chosen for redaction is
// replaced by a marker naming its rule, and only the JSON string that held
// it is re-encoded and spliced into the original bytes: everything else
// in the result stays as the server wrote it. The secret's value is never
// returned.

// Secret is one credential found in a result or an argument.
type Secret struct {
	Rule     string // secretscan's rule
	Verified bool   // see secretscan.Finding.Verified
	Redacted bool   // replaced by a marker in the output
	// Block is the index of the content block that held it; -1 for
	// structuredContent (and for a value that is not a result).
	Block int
}

// Secrets finds the credentials in the raw result raw and replaces those
// for which redact returns true (redact may be nil: none). It returns raw
// itself when nothing is replaced. A result that is not well-formed JSON
// is an error (the guard reports it).
func Secrets(raw json.RawMessage, redact func(secretscan.Finding) bool) (json.RawMessage, []Secret, error) {
	s := secretScan{d: raw, redact: redact}
	i := jsonscan.SkipSpace(raw, 0)
	_, err := jsonscan.Object(raw, i, func(m jsonscan.Member) (int, error) {
		switch {
		case keyIs(m.Key, "content") && raw[m.Value] == '[':
			return jsonscan.Array(raw, m.Value, func(n, start int) (int, error) {
				if raw[start] != '{' {
					end, _, err := jsonscan.Skip(raw, start, 2)
					return end, err
				}
				return s.block(n, start)
			})
		case keyIs(m.Key, "structuredContent"):
			return s.value(m.Value, -1, 1)
		}
		end, _, err := jsonscan.Skip(raw, m.Value, 1)
		return end, err
	})
	if err != nil {
		return nil, nil, malformed(err)
	}
	return s.apply(), s.found, nil
}

// ValueSecrets finds the credentials in every string value of the JSON
// value raw (a call's arguments). Nothing is replaced.
func ValueSecrets(raw json.RawMessage) ([]Secret, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	s := secretScan{d: raw}
	if _, err := s.value(jsonscan.SkipSpace(raw, 0), -1, 0); err != nil {
		return nil, malformed(err)
	}
	return s.found, nil
}

type secretScan struct {
	d      []byte
	redact func(secretscan.Finding) bool
	found  []Secret
	edits  []edit
}

// block scans content block n, an object: its "text", and the "text" of
// an embedded "resource".
func (s *secretScan) block(n, i int) (int, error) {
	return jsonscan.Object(s.d, i, func(m jsonscan.Member) (int, error) {
		switch {
		case keyIs(m.Key, "text") && s.d[m.Value] == '"':
			return s.str(m.Value, n)
		case keyIs(m.Key, "resource") && s.d[m.Value] == '{':
			return jsonscan.Object(s.d, m.Value, func(r jsonscan.Member) (int, error) {
				if keyIs(r.Key, "text") && s.d[r.Value] == '"' {
					return s.str(r.Value, n)
				}
				end, _, err := jsonscan.Skip(s.d, r.Value, 4)
				return end, err
			})
		}
		end, _, err := jsonscan.Skip(s.d, m.Value, 3)
		return end, err
	})
}

// value scans every string of the value at i, which sits inside depth
// containers.
func (s *secretScan) value(i, block, depth int) (int, error) {
	if depth >= jsonscan.MaxDepth {
		end, _, err := jsonscan.Skip(s.d, i, depth)
		return end, err
	}
	switch s.d[i] {
	case '"':
		return s.str(i, block)
	case '{':
		return jsonscan.Object(s.d, i, func(m jsonscan.Member) (int, error) { return s.value(m.Value, block, depth+1) })
	case '[':
		return jsonscan.Array(s.d, i, func(_, start int) (int, error) { return s.value(start, block, depth+1) })
	}
	end, _, err := jsonscan.Skip(s.d, i, depth)
	return end, err
}

// str scans the JSON string at i.
func (s *secretScan) str(i, block int) (int, error) {
	end, info, err := jsonscan.ScanString(s.d, i)
	if err != nil {
		return end, err
	}
	body := s.d[i+1 : end-1]
	text := string(body)
	if !info.Plain() {
		text = string(jsonscan.AppendUnquote(make([]byte, 0, info.Len), body, math.MaxInt))
	}
	fs := secretscan.Scan(text)
	if len(fs) == 0 {
		return end, nil
	}
	any := false
	for _, f := range fs {
		red := s.redact != nil && s.redact(f)
		any = any || red
		s.found = append(s.found, Secret{Rule: f.Rule, Verified: f.Verified, Redacted: red, Block: block})
	}
	if any {
		out := secretscan.Redact(text, fs, s.redact)
		s.edits = append(s.edits, edit{start: i, end: end, text: appendString(nil, []byte(out))})
	}
	return end, nil
}

// apply splices the edits, which are in document order, into the input.
func (s *secretScan) apply() []byte {
	if len(s.edits) == 0 {
		return s.d
	}
	n := len(s.d)
	for _, e := range s.edits {
		n += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range s.edits {
		out = append(out, s.d[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, s.d[last:]...)
}
