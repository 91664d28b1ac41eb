package gateway

import (
	"strings"
	"testing"
	"time"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	s := newSealer(nil)
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	st := s.seal("a:tool", "upstream-state")
	if got, err := s.open("a:tool", st); err != nil || got != "upstream-state" {
		t.Fatalf("open = %q, %v", got, err)
	}
	shared := newSealer(s.key) // another replica's, with the store's key
	shared.now = s.now
	if got, err := shared.open("a:tool", st); err != nil || got != "upstream-state" {
		t.Errorf("open with the same key = %q, %v", got, err)
	}
	other := newSealer(nil)
	tampered := st[:len(st)-2] + "xx"
	body := strings.Split(st, ".")[1]
	tests := map[string]struct {
		sealer *sealer
		tool   string
		state  string
	}{
		"other tool":       {s, "a:other", st},
		"tampered mac":     {s, "a:tool", tampered},
		"other key":        {other, "a:tool", st},
		"not ours":         {s, "a:tool", "upstream-state"},
		"empty":            {s, "a:tool", ""},
		"body without mac": {s, "a:tool", "sb1." + body},
		"forged body":      {s, "a:tool", "sb1.eyJ0IjoiYTp0b29sIiwicyI6IngiLCJlIjo5OTk5OTk5OTk5fQ." + strings.Split(st, ".")[2]},
	}
	for name, tt := range tests {
		if _, err := tt.sealer.open(tt.tool, tt.state); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	now = now.Add(stateTTL + time.Second)
	if _, err := s.open("a:tool", st); err == nil {
		t.Error("expired state accepted")
	}
}
