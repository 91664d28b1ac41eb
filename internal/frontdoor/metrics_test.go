package frontdoor

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMetrics: /metrics is served only when Options.Metrics is set, behind
// the same Host/Origin and token checks as the MCP path, for GET and HEAD;
// every refusal is reported to OnRefuse with its reason.
func TestMetrics(t *testing.T) {
	var mu sync.Mutex
	var refused []string
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "metrics\n")
	})
	base := newServer(t, Options{Token: testToken, Metrics: metrics, OnRefuse: func(reason string) {
		mu.Lock()
		refused = append(refused, reason)
		mu.Unlock()
	}})
	plain := newServer(t, Options{Token: testToken})
	tests := []struct {
		name       string
		base       string
		method     string
		path       string
		token      string
		host       string
		ctype      string
		wantStatus int
		wantBody   string
		wantReason string
	}{
		{"scraped with the token", base, http.MethodGet, MetricsPath, testToken, "", "", 200, "metrics\n", ""},
		{"no token", base, http.MethodGet, MetricsPath, "", "", "", 401, "", RefusedNoToken},
		{"wrong token", base, http.MethodGet, MetricsPath, wrongToken, "", "", 401, "", RefusedBadToken},
		{"foreign Host", base, http.MethodGet, MetricsPath, testToken, "evil.example", "", 403, "", RefusedHost},
		{"POST", base, http.MethodPost, MetricsPath, testToken, "", "application/json", 405, "", RefusedMethod},
		{"not served without Metrics", plain, http.MethodGet, MetricsPath, testToken, "", "", 404, "", ""},
		{"unknown path", base, http.MethodGet, "/other", testToken, "", "", 404, "", RefusedPath},
		{"MCP without JSON", base, http.MethodPost, DefaultPath, testToken, "", "text/plain", 415, "", RefusedContentType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			refused = nil
			mu.Unlock()
			req, err := http.NewRequest(tt.method, tt.base+tt.path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body %q, want %q", body, tt.wantBody)
			}
			var want []string
			if tt.wantReason != "" {
				want = []string{tt.wantReason}
			}
			mu.Lock()
			got := refused
			mu.Unlock()
			if tt.base == plain {
				return // no OnRefuse there
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := New(inner(), Options{Token: testToken, Path: MetricsPath}); err == nil {
		t.Error("New accepted the metrics path as the MCP path")
	}
}
