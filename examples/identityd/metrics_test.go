package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsListening finds the metrics listener's address in serve's log.
var metricsListening = regexp.MustCompile(`msg="metrics listening" addr=(\S+)`)

// TestMetricsEndpoint runs serve with -metrics-addr, makes REST requests,
// a health check and a failed sign-in on the OpenID Provider's page, and
// finds them counted in the exposition at /metrics on the metrics
// listener, parsed with the Prometheus text parser, with the audit
// records they wrote.
func TestMetricsEndpoint(t *testing.T) {
	ctx := context.Background()
	db, key := newDB(t)
	rpc := registerRP(t, db)
	p := startServeWith(t, db, nil, "-metrics-addr", "127.0.0.1:0")
	metricsAddr := waitFor(t, p.log, metricsListening, procWait)[1]

	id := createUser(t, p.base, key, "ada")
	for range 3 {
		if status, body := call(t, http.MethodGet, userURL(p.base, id), key, nil); status != http.StatusOK {
			t.Fatalf("GET user: %d %s", status, body)
		}
	}
	if status, _ := call(t, http.MethodGet, userURL(p.base, id+1), key, nil); status != http.StatusNotFound {
		t.Fatalf("GET a missing user: %d", status)
	}
	if status, _ := call(t, http.MethodGet, p.base+"/healthz", "", nil); status != http.StatusOK {
		t.Fatalf("GET /healthz: %d", status)
	}
	rp := newRelyingParty(t, ctx, p.base, rpc)
	page := rp.submit(t, rp.get(t, rp.authURL(newFlow(1))), "ada", "wrong password")
	if page.location != "" || !strings.Contains(page.body, "is not right") {
		t.Fatalf("a wrong password: status %d, Location %q; want the sign-in page again", page.status, page.location)
	}
	// The API's listener does not serve the metrics.
	if status, _ := call(t, http.MethodGet, p.base+"/metrics", "", nil); status != http.StatusNotFound {
		t.Errorf("GET /metrics on -addr: %d, want 404", status)
	}

	status, body := call(t, http.MethodGet, "http://"+metricsAddr+"/metrics", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", status, body)
	}
	got := parseExposition(t, string(body))
	user := `route="/t/:slug/api/v1/users/:userId"`
	for name, want := range map[string]float64{
		`identity_http_requests_total{method="POST",route="/t/:slug/api/v1/users",status="201"}`: 1,
		`identity_http_requests_total{method="GET",` + user + `,status="200"}`:                   3,
		`identity_http_requests_total{method="GET",` + user + `,status="404"}`:                   1,
		`identity_http_requests_total{method="GET",route="healthz",status="200"}`:                1,
		`identity_http_requests_total{method="GET",route="unmatched",status="404"}`:              1,
		`identity_sign_ins_total{outcome="wrong_password"}`:                                      1,
		`identity_sign_ins_total{outcome="succeeded"}`:                                           0,
		`identity_account_locks_total`:                                                           0,
		`identity_password_hash_wait_seconds_count`:                                              2, // the creation and the verification
		`identity_delivery_queue_depth`:                                                          0,
		`identity_delivery_queue_oldest_due_age_seconds`:                                         0,
		`identity_delivery_attempts_total{kind="webhook",outcome="succeeded"}`:                   0,
		// The audit records this server committed, by action.
		`identity_audit_records_total{action="user.created"}`:   1,
		`identity_audit_records_total{action="sign_in.failed"}`: 1,
		`identity_audit_records_total{action="user.deleted"}`:   0,
	} {
		if g, ok := got[name]; !ok {
			t.Errorf("no sample %s", name)
		} else if g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
	// The provider's pages (discovery, the authorization, the form's
	// post) are counted under "oidc"; the store's transactions too.
	if n := got[`identity_http_requests_total{method="GET",route="oidc",status="200"}`]; n < 1 {
		t.Errorf("OpenID Provider requests: %v, want some", n)
	}
	if n := got[`identity_store_transaction_duration_seconds_count{kind="update",result="ok"}`]; n < 1 {
		t.Errorf("update transactions: %v, want some", n)
	}
	for name := range got {
		if strings.HasPrefix(name, "identity_http_") && strings.Contains(name, "acme") {
			t.Errorf("a path in a label: %s", name)
		}
	}
}

// parseExposition parses the text exposition into one entry per sample,
// name{label="value",...} with the labels in name order; a histogram gives
// name_count{...} and name_sum{...}.
func parseExposition(t *testing.T, text string) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, text)
	}
	out := map[string]float64{}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			key := func(n string) string {
				if len(labels) == 0 {
					return n
				}
				return n + "{" + strings.Join(labels, ",") + "}"
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[key(name)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key(name)] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key(name+"_count")] = float64(m.GetHistogram().GetSampleCount())
				out[key(name+"_sum")] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}
