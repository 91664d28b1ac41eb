package secretscan

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The corpus (testdata/*.jsonl, made by testdata/gen.go) holds
// credentials in realistic text (logs, configurations, .env files, stack
// traces, tool results) and hard negatives (hashes, UUIDs, commit IDs,
// base64 images, public keys, placeholders in documentation, redacted
// tokens). It was written before the rules were tuned, in two halves:
// tune.jsonl, which the rules were tuned on, and unseen.jsonl, measured
// only once they were done.

type sample struct {
	ID, Kind, Secret, Text string
}

func readCorpus(t *testing.T, name string) []sample {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// Score is what Scan does on a corpus.
type score struct {
	positives, found    int // samples holding a credential; those where Scan found it
	negatives, alarmed  int // samples holding none; those where Scan found something
	findings, correct   int // findings in all samples; those on a labelled credential
	missed, falseAlarms []string
}

func (s score) recall() float64    { return float64(s.found) / float64(s.positives) }
func (s score) alarmRate() float64 { return float64(s.alarmed) / float64(s.negatives) }
func (s score) precision() float64 { return float64(s.correct) / float64(max(1, s.findings)) }

func measure(t *testing.T, samples []sample) score {
	var sc score
	for _, s := range samples {
		fs := Scan(s.Text)
		sc.findings += len(fs)
		if s.Secret == "" {
			sc.negatives++
			if len(fs) > 0 {
				sc.alarmed++
				sc.falseAlarms = append(sc.falseAlarms, s.ID+" "+s.Kind+" "+fs[0].Rule+": "+s.Text[fs[0].Start:fs[0].End])
			}
			continue
		}
		sc.positives++
		secret := s.Secret
		if strings.Index(s.Text, secret) < 0 {
			// A PEM block indented in YAML: its first line places it.
			secret, _, _ = strings.Cut(secret, "\n")
		}
		at := strings.Index(s.Text, secret)
		if at < 0 {
			t.Fatalf("%s: the secret is not in the text", s.ID)
		}
		hit := false
		for _, f := range fs {
			// A finding on another credential of the same sample (an AWS
			// key ID beside its secret) is neither a hit nor a false alarm.
			if f.Start < at+len(secret) && at < f.End {
				hit = true
				sc.correct++
			} else if strings.Contains(s.Text[f.Start:f.End], "AKIA") || strings.Contains(s.Text[f.Start:f.End], "ASIA") {
				sc.correct++
			}
		}
		if hit {
			sc.found++
		} else {
			sc.missed = append(sc.missed, s.ID+" "+s.Kind)
		}
	}
	return sc
}

// TestCorpus measures recall and false alarms on each half of the corpus;
// docs/SECURITY.md quotes its figures. The goal: recall at least 0.95,
// false alarms on at most 1 % of negatives.
func TestCorpus(t *testing.T) {
	for _, part := range []string{"tune", "unseen"} {
		t.Run(part, func(t *testing.T) {
			sc := measure(t, readCorpus(t, part+".jsonl"))
			t.Logf("%s: recall %.3f (%d/%d), false alarms %.3f (%d/%d negatives), precision %.3f (%d/%d findings)",
				part, sc.recall(), sc.found, sc.positives, sc.alarmRate(), sc.alarmed, sc.negatives, sc.precision(), sc.correct, sc.findings)
			for _, m := range sc.missed {
				t.Logf("missed %s", m)
			}
			for _, m := range sc.falseAlarms {
				t.Logf("false alarm %s", m)
			}
			if sc.positives < 100 || sc.negatives < 100 {
				t.Fatalf("corpus too small: %d positives, %d negatives", sc.positives, sc.negatives)
			}
			if sc.recall() < 0.95 || sc.alarmRate() > 0.01 {
				t.Errorf("below the goal: recall %.3f (want ≥ 0.95), false alarms %.3f (want ≤ 0.01)", sc.recall(), sc.alarmRate())
			}
		})
	}
}
