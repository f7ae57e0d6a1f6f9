package metrics

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// requestCount returns the value of identity_http_requests_total and the
// sample count of identity_http_request_duration_seconds for a label set,
// from the registry as a scrape reads it.
func requestCount(t *testing.T, m *Metrics, method, route, status string) (requests, durations float64) {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	requests, durations = -1, -1
	for _, mf := range families {
		for _, s := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["method"] != method || labels["route"] != route {
				continue
			}
			switch mf.GetName() {
			case "identity_http_requests_total":
				if labels["status"] == status {
					requests = s.GetCounter().GetValue()
				}
			case "identity_http_request_duration_seconds":
				durations = float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return requests, durations
}

// TestRequestCacheBound: the cache stops at maxRequestEntries label sets
// and never holds a status outside 100-599; the label sets past the bound
// are counted all the same, and those within it still from the cache.
func TestRequestCacheBound(t *testing.T) {
	m := New(nil)
	m.RequestDone(http.MethodGet, "/odd", 42, time.Millisecond)
	m.RequestDone(http.MethodGet, "/odd", 600, time.Millisecond)
	if n := len(*m.requests.Load()); n != 0 {
		t.Errorf("%d label sets cached for statuses 42 and 600, want none", n)
	}
	const extra = 50
	for i := range maxRequestEntries + extra {
		m.RequestDone(http.MethodGet, fmt.Sprintf("/r%d", i), http.StatusOK, time.Millisecond)
	}
	cache := *m.requests.Load()
	if len(cache) != maxRequestEntries {
		t.Errorf("%d label sets cached, want %d", len(cache), maxRequestEntries)
	}
	for k := range cache {
		if k.status < 100 || k.status > 599 {
			t.Errorf("status %d cached", k.status)
		}
	}
	if _, ok := cache[requestKey{http.MethodGet, "/r0", http.StatusOK}]; !ok {
		t.Error("the first label set is not cached")
	}
	last := fmt.Sprintf("/r%d", maxRequestEntries+extra-1)
	if _, ok := cache[requestKey{http.MethodGet, last, http.StatusOK}]; ok {
		t.Error("a label set past the bound is cached")
	}

	// Once more: the cached and the uncached are counted twice, and the
	// cache does not grow.
	for _, route := range []string{"/r0", "/r1023", last} {
		m.RequestDone(http.MethodGet, route, http.StatusOK, time.Millisecond)
	}
	m.RequestDone(http.MethodGet, "/odd", 42, time.Millisecond)
	if n := len(*m.requests.Load()); n != maxRequestEntries {
		t.Errorf("%d label sets cached after the second round, want %d", n, maxRequestEntries)
	}
	for _, c := range []struct {
		route, status   string
		requests, count float64
	}{
		{"/r0", "200", 2, 2},
		{"/r1", "200", 1, 1},
		{"/r1023", "200", 2, 2},
		{"/r1024", "200", 1, 1},
		{last, "200", 2, 2},
		{"/odd", "42", 2, 3},
		{"/odd", "600", 1, 3},
	} {
		requests, count := requestCount(t, m, http.MethodGet, c.route, c.status)
		if requests != c.requests || count != c.count {
			t.Errorf("%s %s: %v requests, %v durations; want %v, %v", c.route, c.status, requests, count, c.requests, c.count)
		}
	}
}
