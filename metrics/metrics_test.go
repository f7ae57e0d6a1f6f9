package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/metrics"
	"github.com/identitylib/identity/store/memstore"
)

// parse reads the text exposition with the Prometheus text parser and
// flattens it to one entry per sample, keyed as the exposition writes it:
// name{label="value",...} with the labels in name order; a histogram
// gives name_count{...}, name_sum{...} and name_bucket{...,le="..."}.
func parse(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	out := map[string]float64{}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := labelsOf(m)
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[series(name, labels)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[series(name, labels)] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[series(name+"_count", labels)] = float64(h.GetSampleCount())
				out[series(name+"_sum", labels)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					le := append(slices.Clone(labels), "le="+fmt.Sprintf("%q", fmt.Sprint(b.GetUpperBound())))
					slices.Sort(le)
					out[series(name+"_bucket", le)] = float64(b.GetCumulativeCount())
				}
			default:
				out[series(name, labels)] = m.GetUntyped().GetValue()
			}
		}
	}
	return out
}

func labelsOf(m *dto.Metric) []string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	slices.Sort(labels)
	return labels
}

func series(name string, labels []string) string {
	if len(labels) == 0 {
		return name
	}
	return name + "{" + strings.Join(labels, ",") + "}"
}

// scrape gets the exposition from h as a scraper that asks for text does.
func scrape(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q, want text/plain", ct)
	}
	return parse(t, rec.Body)
}

// want checks the samples named in want, literally.
func want(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("no sample %s", name)
		} else if g != w {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
}

// TestObserversExposition: what the observers are told appears in the
// exposition under the documented names, labels and counts, every known
// series from zero.
func TestObserversExposition(t *testing.T) {
	m := metrics.New(nil)
	m.TransactionDone(identity.TxView, 2*time.Millisecond, nil)
	m.TransactionDone(identity.TxView, 3*time.Millisecond, nil)
	m.TransactionDone(identity.TxUpdate, time.Millisecond, errors.New("refused"))
	m.SignIn(identity.SignInWrongPassword)
	m.SignIn(identity.SignInWrongPassword)
	m.SignIn(identity.SignInSucceeded)
	m.Locked()
	m.HashWait(0)
	m.HashWait(30 * time.Millisecond)
	m.AttemptDone(identity.WebhookJob, delivery.AttemptSucceeded, 100*time.Millisecond)
	m.AttemptDone(identity.MailJob, delivery.AttemptFailedRetry, 2*time.Second)
	m.AttemptDone(identity.WebhookJob, delivery.AttemptDropped, 0)

	got := scrape(t, m.Handler())
	want(t, got, map[string]float64{
		`identity_store_transaction_duration_seconds_count{kind="view",result="ok"}`:      2,
		`identity_store_transaction_duration_seconds_sum{kind="view",result="ok"}`:        0.005,
		`identity_store_transaction_duration_seconds_count{kind="update",result="error"}`: 1,
		`identity_store_transaction_duration_seconds_count{kind="update",result="ok"}`:    0,
		`identity_store_transaction_duration_seconds_count{kind="view",result="error"}`:   0,
		`identity_sign_ins_total{outcome="wrong_password"}`:                               2,
		`identity_sign_ins_total{outcome="succeeded"}`:                                    1,
		`identity_sign_ins_total{outcome="locked"}`:                                       0,
		`identity_sign_ins_total{outcome="mfa_required"}`:                                 0,
		`identity_account_locks_total`:                                                    1,
		`identity_password_hash_wait_seconds_count`:                                       2,
		`identity_password_hash_wait_seconds_sum`:                                         0.03,
		`identity_password_hash_wait_seconds_bucket{le="0.001"}`:                          1,
		`identity_password_hash_wait_seconds_bucket{le="0.05"}`:                           2,
		`identity_delivery_attempts_total{kind="webhook",outcome="succeeded"}`:            1,
		`identity_delivery_attempts_total{kind="mail",outcome="failed_retry"}`:            1,
		`identity_delivery_attempts_total{kind="webhook",outcome="dropped"}`:              1,
		`identity_delivery_attempts_total{kind="webhook",outcome="failed_permanent"}`:     0,
		`identity_delivery_attempt_duration_seconds_count{kind="webhook"}`:                1, // the dropped one was not sent
		`identity_delivery_attempt_duration_seconds_count{kind="mail"}`:                   1,
		`identity_delivery_attempt_duration_seconds_sum{kind="mail"}`:                     2,
	})
	for _, outcome := range identity.SignInOutcomes() {
		if _, ok := got[`identity_sign_ins_total{outcome="`+string(outcome)+`"}`]; !ok {
			t.Errorf("no series for the sign-in outcome %s", outcome)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no go_goroutines: the Go collector is missing")
	}
	for name := range got {
		if strings.HasPrefix(name, "identity_delivery_queue") {
			t.Errorf("%s without CollectQueue", name)
		}
	}
}

// apiEnv is a Service with the workspace acme, its REST API observed by
// m, and a key with every scope.
type apiEnv struct {
	svc   *identity.Service
	ws    *identity.Workspace
	clock *testutil.Clock
	m     *metrics.Metrics
	api   http.Handler
	key   string
}

func newAPIEnv(t *testing.T) *apiEnv {
	t.Helper()
	e := &apiEnv{m: metrics.New(nil), clock: testutil.NewClock(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))}
	svc, err := identity.New(memstore.New(), &identity.Options{
		Now:             e.clock.Now,
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
		Observer:        e.m,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	e.svc = svc
	ctx := context.Background()
	if e.ws, err = svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		t.Fatal(err)
	}
	created, err := e.ws.CreateAPIKey(ctx, "metrics test", identity.Scopes())
	if err != nil {
		t.Fatal(err)
	}
	e.key = created.Secret
	e.api = httpapi.New(svc, &httpapi.Options{Logger: slog.New(slog.DiscardHandler), Observer: e.m})
	return e
}

// do sends a request to the API and returns its status.
func (e *apiEnv) do(t *testing.T, method, path, body string) int {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.api.ServeHTTP(rec, req)
	return rec.Code
}

// TestHTTPAPIRequests: the REST API's requests are counted by method,
// route pattern and status (never by path), with their durations.
func TestHTTPAPIRequests(t *testing.T) {
	e := newAPIEnv(t)
	if code := e.do(t, http.MethodPost, "/t/acme/api/v1/users",
		`{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace","password":"analytical engine"}`); code != http.StatusCreated {
		t.Fatalf("POST /users: %d", code)
	}
	for range 3 {
		if code := e.do(t, http.MethodGet, "/t/acme/api/v1/users/1", ""); code != http.StatusOK {
			t.Fatalf("GET /users/1: %d", code)
		}
	}
	for _, path := range []string{"/t/acme/api/v1/users/2", "/t/acme/api/v1/users/3"} {
		if code := e.do(t, http.MethodGet, path, ""); code != http.StatusNotFound {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	if code := e.do(t, http.MethodGet, "/t/acme/api/v1/no-such-thing", ""); code != http.StatusNotFound {
		t.Fatalf("GET an unknown path: %d", code)
	}
	if code := e.do(t, "BREW", "/t/acme/api/v1/users", ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("BREW /users: %d", code)
	}

	got := scrape(t, e.m.Handler())
	user := `route="/t/:slug/api/v1/users/:userId"`
	want(t, got, map[string]float64{
		`identity_http_requests_total{method="POST",route="/t/:slug/api/v1/users",status="201"}`:    1,
		`identity_http_requests_total{method="GET",` + user + `,status="200"}`:                      3,
		`identity_http_requests_total{method="GET",` + user + `,status="404"}`:                      2,
		`identity_http_requests_total{method="GET",route="unmatched",status="404"}`:                 1,
		`identity_http_requests_total{method="other",route="unmatched",status="405"}`:               1,
		`identity_http_request_duration_seconds_count{method="GET",` + user + `}`:                   5,
		`identity_http_request_duration_seconds_count{method="POST",route="/t/:slug/api/v1/users"}`: 1,
	})
	// The API key's verification, the user's creation and its reads are
	// store transactions; creating the user hashed a password.
	if got[`identity_store_transaction_duration_seconds_count{kind="view",result="ok"}`] < 4 ||
		got[`identity_store_transaction_duration_seconds_count{kind="update",result="ok"}`] < 1 {
		t.Errorf("transactions not counted: %v", got)
	}
	if got[`identity_password_hash_wait_seconds_count`] != 1 {
		t.Errorf("hash waits %v, want 1", got[`identity_password_hash_wait_seconds_count`])
	}
	for name := range got {
		if strings.HasPrefix(name, "identity_http_") && (strings.Contains(name, "/users/1") || strings.Contains(name, "acme")) {
			t.Errorf("a path in a label: %s", name)
		}
	}
}

// TestSignInsThroughService: the Service's sign-ins reach the counters
// with their outcomes, and a lock its counter.
func TestSignInsThroughService(t *testing.T) {
	e := newAPIEnv(t)
	ctx := context.Background()
	s, err := e.ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Lockout = identity.LockoutPolicy{Threshold: 2}
	if err := e.ws.UpdateSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(ctx, "ada", "analytical engine"); err != nil {
		t.Fatal(err)
	}
	for _, login := range []string{"ghost", "ada", "ada", "ada"} {
		if _, err := e.ws.Authenticate(ctx, login, "wrong"); err == nil {
			t.Fatalf("Authenticate(%s, wrong) succeeded", login)
		}
	}
	want(t, scrape(t, e.m.Handler()), map[string]float64{
		`identity_sign_ins_total{outcome="succeeded"}`:      1,
		`identity_sign_ins_total{outcome="unknown_user"}`:   1,
		`identity_sign_ins_total{outcome="wrong_password"}`: 2,
		`identity_sign_ins_total{outcome="locked"}`:         1,
		`identity_account_locks_total`:                      1,
		`identity_password_hash_wait_seconds_count`:         5, // the creation and four verifications; none while locked
	})
}

// TestInstrument: a handler wrapped by Instrument is counted under its
// fixed route name, whatever its path.
func TestInstrument(t *testing.T) {
	m := metrics.New(nil)
	h := m.Instrument("oidc", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/t/acme/missing" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("ok"))
	}))
	for _, path := range []string{"/t/acme/authorize", "/t/beta/authorize", "/t/acme/missing"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	want(t, scrape(t, m.Handler()), map[string]float64{
		`identity_http_requests_total{method="GET",route="oidc",status="200"}`:    2,
		`identity_http_requests_total{method="GET",route="oidc",status="404"}`:    1,
		`identity_http_request_duration_seconds_count{method="GET",route="oidc"}`: 3,
	})

	var none *metrics.Metrics
	plain := http.NotFoundHandler()
	if got := none.Instrument("healthz", plain); fmt.Sprint(got) != fmt.Sprint(plain) {
		t.Error("a nil *Metrics wrapped the handler")
	}
}

// TestQueueGauges: the queue's depth and the age of its earliest due job
// are read at each scrape, by the Service's clock.
func TestQueueGauges(t *testing.T) {
	e := newAPIEnv(t)
	if err := e.m.CollectQueue(e.svc); err != nil {
		t.Fatal(err)
	}
	want(t, scrape(t, e.m.Handler()), map[string]float64{
		`identity_delivery_queue_depth`:                  0,
		`identity_delivery_queue_oldest_due_age_seconds`: 0,
	})
	ctx := context.Background()
	if _, err := e.ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/identity", Events: []string{string(identity.EventUserCreated)}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ada", "grace"} {
		if _, err := e.ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: name, Password: "analytical engine"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(30 * time.Second)
	}
	e.clock.Advance(30 * time.Second)
	got := scrape(t, e.m.Handler())
	want(t, got, map[string]float64{
		`identity_delivery_queue_depth`:                  2,
		`identity_delivery_queue_oldest_due_age_seconds`: 90,
	})

	// WriteText writes the same exposition, for the admin socket.
	var buf bytes.Buffer
	if err := e.m.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := parse(t, &buf)
	for _, name := range []string{`identity_delivery_queue_depth`, `identity_sign_ins_total{outcome="succeeded"}`, `identity_delivery_attempts_total{kind="mail",outcome="dropped"}`} {
		if text[name] != got[name] {
			t.Errorf("WriteText: %s = %v, Handler: %v", name, text[name], got[name])
		}
	}
	if err := e.m.CollectQueue(e.svc); err == nil {
		t.Error("a second CollectQueue succeeded")
	}
}

// failingQueue is a Queue whose store fails.
type failingQueue struct{}

func (failingQueue) GetQueueStats(context.Context) (identity.QueueStats, error) {
	return identity.QueueStats{}, errors.New("the store is down")
}

func (failingQueue) Now() time.Time { return time.Now() }

// TestQueueReadFails: when the queue cannot be read its gauges are left
// out, and every other metric is still served.
func TestQueueReadFails(t *testing.T) {
	var log bytes.Buffer
	m := metrics.New(&metrics.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err := m.CollectQueue(failingQueue{}); err != nil {
		t.Fatal(err)
	}
	m.SignIn(identity.SignInSucceeded)
	got := scrape(t, m.Handler())
	want(t, got, map[string]float64{`identity_sign_ins_total{outcome="succeeded"}`: 1})
	if _, ok := got["identity_delivery_queue_depth"]; ok {
		t.Error("identity_delivery_queue_depth served without a read")
	}
	if !strings.Contains(log.String(), "the store is down") {
		t.Errorf("the failure was not logged; log: %s", log.String())
	}

	var buf bytes.Buffer
	if err := m.WriteText(&buf); err == nil || !strings.Contains(err.Error(), "the store is down") {
		t.Errorf("WriteText: %v, want the store's failure", err)
	}
	want(t, parse(t, &buf), map[string]float64{`identity_sign_ins_total{outcome="succeeded"}`: 1})
}

// TestExpositionIsWellFormed: every identity_ family has help text and a
// name that Prometheus's conventions expect: counters end in _total,
// durations are in seconds.
func TestExpositionIsWellFormed(t *testing.T) {
	e := newAPIEnv(t)
	if err := e.m.CollectQueue(e.svc); err != nil {
		t.Fatal(err)
	}
	e.do(t, http.MethodGet, "/t/acme/api/v1/users", "")
	var buf bytes.Buffer
	if err := e.m.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, mf := range families {
		if !strings.HasPrefix(name, "identity_") {
			continue
		}
		names = append(names, name+" "+strings.ToLower(mf.GetType().String()))
		if mf.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
	}
	slices.Sort(names)
	wantNames := []string{
		"identity_account_locks_total counter",
		"identity_audit_records_total counter",
		"identity_delivery_attempt_duration_seconds histogram",
		"identity_delivery_attempts_total counter",
		"identity_delivery_queue_depth gauge",
		"identity_delivery_queue_oldest_due_age_seconds gauge",
		"identity_http_request_duration_seconds histogram",
		"identity_http_requests_total counter",
		"identity_password_hash_wait_seconds histogram",
		"identity_sign_ins_total counter",
		"identity_store_transaction_duration_seconds histogram",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("families (-want +got):\n%s", diff)
	}
}
