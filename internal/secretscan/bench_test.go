package secretscan

import (
	"strings"
	"testing"
)

// BenchmarkScan scans 100 KiB of text (the default cap on a result's text
// block): plain prose with no keyword, and log lines full of keywords
// (URLs, sk-, eyJ, gh) but no credential.
func BenchmarkScan(b *testing.B) {
	for name, line := range map[string]string{
		"prose": "The quick brown fox jumps over the lazy dog while the build runs its tests again.\n",
		"busy":  "GET https://api.github.com/repos/acme/task-runner?sort=desc eyJhbGciOi... ghp_**** sk-... 3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f901\n",
	} {
		text := strings.Repeat(line, 100<<10/len(line))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				Scan(text)
			}
		})
	}
}
