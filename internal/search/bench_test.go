package search

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Benchmarks run against a corpus scaled up from the realistic one: each
// synthetic tool copies a real or realistic tool under another server's
// prefix, with the object of its name swapped for another noun throughout
// name, title, description and parameters, so that the vocabulary grows
// with the corpus as it would with real servers.

var benchServers = strings.Fields(`acme_crm zendesk hubspot confluence gitlab bitbucket asana trello
	salesforce stripe shopify twilio sendgrid datadog sentry pagerduty grafana kubernetes docker
	aws_s3 gcs azure_blob dropbox box onedrive sharepoint outlook gmail calendar zoom teams discord
	telegram airtable mysql mongodb redis elastic snowflake bigquery clickhouse supabase firebase
	vercel netlify cloudflare figma miro clickup monday todoist evernote obsidian intercom freshdesk
	mailchimp spotify youtube twitter reddit okta auth0 vault terraform ansible jenkins circleci`)

var benchNouns = strings.Fields(`invoice customer contact deal lead order product subscription payment
	refund coupon ticket incident alert dashboard metric monitor trace span log event webhook secret
	token key certificate domain record zone bucket object blob volume snapshot cluster node pod
	deployment service ingress secret namespace container image registry build pipeline job artifact
	release environment variable flag experiment campaign audience segment template form survey
	response meeting recording transcript calendar invitation attendee playlist track album video
	channel subscriber post thread reply reaction mention draft note notebook page block database
	table view record field attachment comment task project milestone sprint epic story roadmap goal
	team member role permission policy group user account session device location address shipment`)

// nounIn returns the last name part of a tool name that is also a word of
// its description, the object to swap.
func nounIn(d Doc) string {
	_, tool := splitName(d.Name)
	parts := strings.FieldsFunc(tool, func(r rune) bool { return r == '_' || r == '-' })
	low := strings.ToLower(d.Description)
	for i := len(parts) - 1; i >= 0; i-- {
		if p := strings.ToLower(parts[i]); len(p) > 2 && strings.Contains(low, p) {
			return p
		}
	}
	return ""
}

// scaledCorpus returns n docs: the realistic corpus first, then synthetic
// copies, deterministically.
func scaledCorpus(tb testing.TB, n int) []Doc {
	base := loadCorpus(tb)
	rng := rand.New(rand.NewPCG(7, 11))
	docs := slices.Clone(base)
	seen := map[string]bool{}
	for _, d := range docs {
		seen[d.ID] = true
	}
	for len(docs) < n {
		b := base[rng.IntN(len(base))]
		_, tool := splitName(b.Name)
		srv := benchServers[rng.IntN(len(benchServers))]
		if rng.IntN(3) == 0 {
			srv += fmt.Sprint("_", rng.IntN(9)+2)
		}
		d := Doc{Title: b.Title, Description: b.Description, Params: slices.Clone(b.Params)}
		if old := nounIn(b); old != "" {
			nw := benchNouns[rng.IntN(len(benchNouns))]
			swap := func(s string) string {
				s = strings.ReplaceAll(s, old, nw)
				return strings.ReplaceAll(s, strings.ToUpper(old[:1])+old[1:], strings.ToUpper(nw[:1])+nw[1:])
			}
			tool, d.Title, d.Description = swap(tool), swap(d.Title), swap(d.Description)
			for i := range d.Params {
				d.Params[i].Description = swap(d.Params[i].Description)
			}
		}
		d.Name = srv + "__" + tool
		if seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		d.ID = d.Name
		docs = append(docs, d)
	}
	return docs[:n]
}

func benchQueries(tb testing.TB) []string {
	var qs []string
	for _, f := range []string{"queries.json", "queries_holdout.json"} {
		for _, q := range loadQueries(tb, f) {
			qs = append(qs, q.Query)
		}
	}
	return qs
}

// BenchmarkSearch measures one Search(q, 5) over the labelled queries in
// turn, and reports the latency distribution per query.
func BenchmarkSearch(b *testing.B) {
	qs := benchQueries(b)
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ix := New()
			ix.Upsert(scaledCorpus(b, n)...)
			ix.Search("warm up", 5) // build the derived cache outside the timing
			durs := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				ix.Search(qs[i%len(qs)], 5)
				durs = append(durs, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(durs)
			pct := func(p float64) float64 {
				return float64(durs[min(len(durs)-1, int(p*float64(len(durs))))].Nanoseconds()) / 1e3
			}
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
			b.ReportMetric(float64(durs[len(durs)-1].Nanoseconds())/1e3, "max-µs")
		})
	}
}

// BenchmarkSearchParallel is Search from every core at once: readers share
// the lock and do not contend.
func BenchmarkSearchParallel(b *testing.B) {
	qs := benchQueries(b)
	ix := New()
	ix.Upsert(scaledCorpus(b, 10000)...)
	ix.Search("warm up", 5)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			ix.Search(qs[i%len(qs)], 5)
			i++
		}
	})
}

// BenchmarkBuild measures indexing n tools in one Upsert plus the first
// Search (which builds the derived statistics), and the heap the index
// holds afterwards.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			docs := scaledCorpus(b, n)
			var heap uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				b.StartTimer()
				ix := New()
				ix.Upsert(docs...)
				ix.Search("file", 5)
				b.StopTimer()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				heap = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
				runtime.KeepAlive(ix)
				b.StartTimer()
			}
			b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(heap)/float64(n), "heap-B/tool")
		})
	}
}

// BenchmarkUpdate measures the incremental path at 10,000 tools: replace
// one server's 20 tools, then the first Search, which rebuilds the derived
// statistics.
func BenchmarkUpdate(b *testing.B) {
	docs := scaledCorpus(b, 10000)
	ix := New()
	ix.Upsert(docs...)
	batch := docs[500:520]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range batch {
			batch[j].Description += "."
		}
		ix.Upsert(batch...)
		ix.Search("list files", 5)
	}
}

// BenchmarkSearchWorst is a long query of the corpus's commonest words,
// each with synonyms: the most work one Search can be given (informative
// caps it at maxGroups terms).
func BenchmarkSearchWorst(b *testing.B) {
	ix := New()
	ix.Upsert(scaledCorpus(b, 10000)...)
	ix.Search("warm up", 5)
	q := "get list file create delete update search run read write show find add remove make new " +
		"query issue message user channel page table database directory folder repository pull " +
		"request comment label image " + strings.Repeat("filesystem ", 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.Search(q, 5)
	}
}
