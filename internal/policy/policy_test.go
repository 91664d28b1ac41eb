package policy

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustNew(t testing.TB, c Config) *Engine {
	t.Helper()
	e, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func TestRulesFirstMatchWins(t *testing.T) {
	e := mustNew(t, Config{
		Rules: []Rule{
			{Action: Allow, Pattern: "gh:delete_draft"},
			{Action: Deny, Pattern: "gh:delete_*"},
			{Action: Allow, Pattern: "gh:*"},
			{Action: Deny, Pattern: "*:exec"},
			{Action: Allow, Pattern: "shell:exec"}, // shadowed by rule 3
		},
		Default: Deny,
	})
	tests := []struct {
		id      string
		verdict Verdict
		reason  string
		rule    int
	}{
		{"gh:delete_draft", Permit, "", 0},
		{"gh:delete_repo", Refuse, ReasonRule, 1},
		{"gh:list", Permit, "", 2},
		{"gh:exec", Permit, "", 2}, // rule 2 comes before rule 3
		{"shell:exec", Refuse, ReasonRule, 3},
		{"fs:read", Refuse, ReasonDefaultDeny, -1},
		{"", Refuse, ReasonDefaultDeny, -1},
	}
	for _, tt := range tests {
		d := e.Decide(Request{ID: tt.id, Trust: Trusted})
		if d.Verdict != tt.verdict || d.Reason != tt.reason || d.Rule != tt.rule {
			t.Errorf("Decide(%q) = %+v; want %s %q rule %d", tt.id, d, tt.verdict, tt.reason, tt.rule)
		}
		if rule, _ := e.Match(tt.id); rule != tt.rule {
			t.Errorf("Match(%q) = rule %d, want %d", tt.id, rule, tt.rule)
		}
	}
	if d := e.Decide(Request{ID: "gh:delete_repo"}); d.Detail != `denied by rule 1 "deny gh:delete_*"` {
		t.Errorf("Detail = %q", d.Detail)
	}
	if d := e.Decide(Request{ID: "fs:read"}); d.Detail == "" {
		t.Error("default deny has no Detail")
	}
}

func TestDefaults(t *testing.T) {
	// The zero Config permits everything without confirmation or quota.
	e := mustNew(t, Config{})
	for i := 0; i < 1000; i++ {
		d := e.Decide(Request{ID: "any:tool", Trust: Untrusted})
		if d != (Decision{Verdict: Permit, Rule: -1}) {
			t.Fatalf("zero Config: Decide = %+v", d)
		}
	}
	e = mustNew(t, Config{Default: Allow, Rules: []Rule{{Action: Deny, Pattern: "x:*"}}})
	if d := e.Decide(Request{ID: "y:z"}); d.Verdict != Permit || d.Rule != -1 {
		t.Errorf("default allow: Decide = %+v", d)
	}
}

func TestConfirm(t *testing.T) {
	yes, no := true, false
	readOnly := &Annotations{ReadOnly: &yes}
	additive := &Annotations{Destructive: &no}
	destructive := &Annotations{Destructive: &yes}

	tests := []struct {
		mode   Confirm
		trust  Trust
		ann    *Annotations
		reason string // "" means Permit
	}{
		{"", Untrusted, destructive, ""},
		{ConfirmNever, Untrusted, destructive, ""},

		{ConfirmDestructive, Trusted, readOnly, ""},
		{ConfirmDestructive, Trusted, additive, ""},
		{ConfirmDestructive, Trusted, destructive, ReasonDestructive},
		{ConfirmDestructive, Trusted, nil, ReasonDestructive}, // MCP default
		{ConfirmDestructive, Untrusted, readOnly, ReasonDestructive},
		{ConfirmDestructive, Untrusted, additive, ReasonDestructive},
		{ConfirmDestructive, Sandboxed, readOnly, ReasonDestructive},
		{ConfirmDestructive, "", readOnly, ReasonDestructive},

		{ConfirmAlways, Trusted, readOnly, ReasonAlwaysConfirm},
		{ConfirmAlways, Untrusted, nil, ReasonAlwaysConfirm},
	}
	for _, tt := range tests {
		e := mustNew(t, Config{Confirm: tt.mode, Rules: []Rule{{Action: Allow, Pattern: "gh:*"}}})
		d := e.Decide(Request{ID: "gh:x", Trust: tt.trust, Annotations: tt.ann})
		want := Decision{Verdict: Permit, Rule: 0}
		if tt.reason != "" {
			want = Decision{Verdict: AskUser, Reason: tt.reason, Rule: 0, Detail: d.Detail}
			if d.Detail == "" {
				t.Errorf("%s/%s: AskUser without Detail", tt.mode, tt.trust)
			}
		}
		if d != want {
			t.Errorf("confirm %q, trust %q, %+v: Decide = %+v, want %+v", tt.mode, tt.trust, tt.ann, d, want)
		}
	}

	// Rules still come first: a denied call is refused, not confirmed.
	e := mustNew(t, Config{Confirm: ConfirmAlways, Rules: []Rule{{Action: Deny, Pattern: "gh:*"}}})
	if d := e.Decide(Request{ID: "gh:x"}); d.Verdict != Refuse {
		t.Errorf("deny rule with ConfirmAlways: Decide = %+v", d)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want []string // substrings of the error
	}{
		{"malformed pattern", Config{Rules: []Rule{{Action: Allow, Pattern: "ok:*"}, {Action: Deny, Pattern: "gh:[z"}}},
			[]string{`rule 1 pattern "gh:[z"`, "unterminated character class"}},
		{"every bad rule is reported", Config{Rules: []Rule{{Action: Deny, Pattern: `a\`}, {Action: Allow, Pattern: "ok"}, {Action: Deny, Pattern: "[]"}}},
			[]string{"rule 0", "trailing backslash", "rule 2", "empty character class"}},
		{"bad action", Config{Rules: []Rule{{Action: "block", Pattern: "gh:*"}}}, []string{`rule 0 "block gh:*"`, `action "block"`}},
		{"empty action", Config{Rules: []Rule{{Action: "", Pattern: "gh:*"}}}, []string{"rule 0", `action ""`}},
		{"empty pattern", Config{Rules: []Rule{{Action: Deny, Pattern: ""}}}, []string{"rule 0", "empty pattern"}},
		{"bad default", Config{Default: "maybe"}, []string{`default action "maybe"`}},
		{"bad confirm", Config{Confirm: "sometimes"}, []string{`confirm mode "sometimes"`}},
		{"negative calls", Config{Quota: Quota{Calls: -1}}, []string{"negative"}},
		{"no period", Config{Quota: Quota{Calls: 5}}, []string{"positive period"}},
		{"negative max keys", Config{Quota: Quota{MaxKeys: -1}}, []string{"max keys"}},
	}
	for _, tt := range tests {
		e, err := New(tt.c)
		if err == nil {
			t.Errorf("%s: New succeeded", tt.name)
			continue
		}
		if e != nil {
			t.Errorf("%s: New returned an Engine with an error", tt.name)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, w)
			}
		}
		if verr := tt.c.Validate(); verr == nil || verr.Error() != err.Error() {
			t.Errorf("%s: Validate = %v, New = %v", tt.name, verr, err)
		}
	}

	_, err := New(Config{Rules: []Rule{{Action: Deny, Pattern: "gh:[b-a]"}}})
	var re *RuleError
	var pe *PatternError
	if !errors.As(err, &re) || re.Index != 0 || re.Rule.Pattern != "gh:[b-a]" || !errors.As(err, &pe) {
		t.Errorf("New error %v does not unwrap to a *RuleError and *PatternError", err)
	}
}

// The permit path must not allocate, with and without a quota (for a key
// already seen).
func TestDecideDoesNotAllocate(t *testing.T) {
	clock := newFakeClock()
	for _, q := range []Quota{{}, {Calls: 1 << 30, Per: time.Hour}} {
		e := mustNew(t, Config{Rules: benchRules(), Default: Deny, Quota: q, Confirm: ConfirmDestructive, Now: clock.Now})
		yes := true
		r := Request{ID: "srv49:read_thing", Trust: Trusted, Annotations: &Annotations{ReadOnly: &yes}, Client: "c"}
		if d := e.Decide(r); d.Verdict != Permit {
			t.Fatalf("Decide = %+v", d)
		}
		if a := testing.AllocsPerRun(1000, func() { e.Decide(r) }); a != 0 {
			t.Errorf("quota %+v: Decide allocates %v times per call", q, a)
		}
	}
}

func TestDecideConcurrent(t *testing.T) {
	clock := newFakeClock()
	const calls = 500
	e := mustNew(t, Config{
		Rules:   []Rule{{Action: Deny, Pattern: "*:delete_*"}, {Action: Allow, Pattern: "*"}},
		Confirm: ConfirmDestructive,
		Quota:   Quota{Calls: calls, Per: time.Minute},
		Now:     clock.Now,
	})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		counts  = map[string]map[Verdict]int{}
		clients = []string{"", "a", "b"}
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := map[string]map[Verdict]int{}
			for i := 0; i < 400; i++ {
				c := clients[i%len(clients)]
				id := fmt.Sprintf("s%d:tool", i%7)
				if i%5 == 0 {
					id = "s:delete_all"
				}
				d := e.Decide(Request{ID: id, Trust: Trusted, Client: c})
				if local[c] == nil {
					local[c] = map[Verdict]int{}
				}
				local[c][d.Verdict]++
			}
			mu.Lock()
			defer mu.Unlock()
			for c, m := range local {
				if counts[c] == nil {
					counts[c] = map[Verdict]int{}
				}
				for v, n := range m {
					counts[c][v] += n
				}
			}
		}()
	}
	wg.Wait()
	// Each client asked more than its quota; exactly the quota got through
	// (as confirmations, since the tools are not annotated).
	for _, c := range clients {
		if got := counts[c][AskUser]; got != calls {
			t.Errorf("client %q: %d calls admitted, want %d (%v)", c, got, calls, counts[c])
		}
		if counts[c][Permit] != 0 {
			t.Errorf("client %q: %d calls permitted without confirmation", c, counts[c][Permit])
		}
	}
}

// benchRules is a realistic 50-rule policy: specific denies and allows per
// server, ending in a catch-all.
func benchRules() []Rule {
	var rules []Rule
	for i := 0; len(rules) < 49; i++ {
		rules = append(rules,
			Rule{Action: Deny, Pattern: fmt.Sprintf("srv%d:delete_*", i)},
			Rule{Action: Allow, Pattern: fmt.Sprintf("srv%d:[rl]*", i)},
			Rule{Action: Deny, Pattern: fmt.Sprintf("*:admin_%d_?", i)},
		)
	}
	rules = rules[:49]
	return append(rules, Rule{Action: Allow, Pattern: "srv49:*"})
}

func BenchmarkDecide(b *testing.B) {
	yes := true
	ann := &Annotations{ReadOnly: &yes}
	cases := []struct {
		name string
		id   string
		q    Quota
	}{
		{"last_rule", "srv49:read_thing", Quota{}},
		{"no_match", "other:thing", Quota{}},
		{"first_rule", "srv0:delete_x", Quota{}},
		{"last_rule_quota", "srv49:read_thing", Quota{Calls: 1 << 30, Per: time.Hour}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := mustNew(b, Config{Rules: benchRules(), Default: Deny, Confirm: ConfirmDestructive, Quota: c.q})
			r := Request{ID: c.id, Trust: Trusted, Annotations: ann}
			b.ReportAllocs()
			for b.Loop() {
				e.Decide(r)
			}
		})
	}
	b.Run("parallel_quota", func(b *testing.B) {
		e := mustNew(b, Config{Rules: benchRules(), Quota: Quota{Calls: 1 << 30, Per: time.Hour}})
		r := Request{ID: "srv49:read_thing", Trust: Trusted, Annotations: ann}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.Decide(r)
			}
		})
	})
}
