package webhook

import (
	"context"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/identitylib/identity"
)

// TestDialGuard judges resolved addresses as net.Dialer's Control sees
// them: with the guard on only public addresses pass; with it off,
// everything but cloud metadata services passes. IPv4-mapped, NAT64 and
// 6to4 addresses are judged by the IPv4 address they carry; a metadata
// address is refused in every form that carries one.
func TestDialGuard(t *testing.T) {
	cases := []struct {
		addr              string
		guardOn, guardOff bool // allowed?
	}{
		{"127.0.0.1:443", false, true},
		{"[::1]:443", false, true},
		{"[::ffff:127.0.0.1]:443", false, true},
		{"10.1.2.3:443", false, true},
		{"192.168.1.1:443", false, true},
		{"[fe80::1%eth0]:443", false, true},
		{"0.0.0.0:443", false, true},
		{"169.254.169.254:80", false, false},
		{"[::ffff:169.254.169.254]:80", false, false},
		{"[fd00:ec2::254]:80", false, false},
		{"169.254.170.2:80", false, false},
		{"[::127.0.0.1]:8443", false, true},
		{"[::ffff:10.0.0.1]:443", false, true},
		{"[64:ff9b::10.0.0.1]:443", false, true},
		{"[2002:a00:1::1]:443", false, true},
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:443", false, true},
		{"[::169.254.169.254]:80", false, false},
		{"[64:ff9b::169.254.169.254]:80", false, false},
		{"[2002:a9fe:a9fe::1]:80", false, false},
		{"[64:ff9b::100.100.100.200]:80", false, false},
		{"[64:ff9b::8.8.8.8]:443", true, true},
		{"[2002:808:808::1]:443", true, true},
		{"8.8.8.8:443", true, true},
		{"[2606:4700:4700::1111]:443", true, true},
		{"[::ffff:8.8.8.8]:443", true, true},
		{"not-an-address", false, false},
	}
	for _, c := range cases {
		for _, allowPrivate := range []bool{false, true} {
			want := c.guardOn
			if allowPrivate {
				want = c.guardOff
			}
			err := checkDialAddress(c.addr, allowPrivate)
			if (err == nil) != want {
				t.Errorf("%s with allowPrivate=%v: err = %v, want allowed=%v", c.addr, allowPrivate, err, want)
			}
		}
	}
}

func newCountingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h(w, r)
		}
	}))
	// Refused handshakes and closed connections are what these tests
	// cause; the server's complaints about them are noise.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &n
}

func post(t *testing.T, client *Client, url string, timeout time.Duration) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := client.Send(ctx, identity.WebhookRequest{URL: url, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		EventID: "msg_1", Timestamp: time.Now(), Body: []byte(`{}`)})
	return resp.Status, err
}

// TestTransportRefusesNameResolvingToLoopback: with the guard on, a host
// name that resolves to loopback ("localhost", from the hosts file) is
// refused at dial time and the server sees nothing.
func TestTransportRefusesNameResolvingToLoopback(t *testing.T) {
	srv, n := newCountingServer(t, nil)
	port := srv.Listener.Addr().String()
	port = port[strings.LastIndex(port, ":"):]
	pool := srvRoots(srv)
	status, err := post(t, NewClient(&Options{RootCAs: pool}), "https://localhost"+port+"/", time.Minute)
	if err == nil || status != 0 || !strings.Contains(err.Error(), "not a public address") {
		t.Errorf("status %d, err %v; want the guard's refusal", status, err)
	}
	// The same server is reachable with the guard off: the refusal above
	// was the guard's.
	if status, err := post(t, NewClient(&Options{AllowPrivate: true, RootCAs: pool}), srv.URL, time.Minute); err != nil || status != 200 {
		t.Errorf("guard off: status %d, err %v", status, err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("server got %d requests, want 1", got)
	}
}

// TestTransportRefusesEmbeddedPrivateAddresses: with the guard on, an
// IPv4-compatible loopback literal and an IPv4-mapped private literal are
// refused when dialed (net.Dialer's Control sees [::7f00:1]:8443 and
// 10.0.0.1:443), before any connection is attempted: the wait for the
// answer is bounded only generously, and nothing listens there anyway.
func TestTransportRefusesEmbeddedPrivateAddresses(t *testing.T) {
	client := NewClient(nil)
	for _, tt := range []struct{ url, dialed string }{
		{"https://[::127.0.0.1]:8443/", "[::7f00:1]:8443"},
		{"https://[::ffff:10.0.0.1]/", "10.0.0.1:443"},
	} {
		status, err := post(t, client, tt.url, time.Minute)
		want := "refused to connect to " + tt.dialed + ": not a public address"
		if err == nil || status != 0 || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: status %d, err %v; want the guard's refusal %q", tt.url, status, err, want)
		}
	}
}

// TestTransportIgnoresProxyAndRedirects: the environment's proxy is not
// used, and a redirect is returned as a failure, not followed.
func TestTransportIgnoresProxyAndRedirects(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	target, hits := newCountingServer(t, nil)
	srv, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	client := NewClient(&Options{AllowPrivate: true, RootCAs: srvRoots(srv)})
	if tr := client.http.Transport.(*http.Transport); tr.Proxy != nil {
		t.Error("the transport has a proxy function")
	}
	status, err := post(t, client, srv.URL, time.Minute)
	if status != http.StatusTemporaryRedirect || err == nil {
		t.Errorf("status %d, err %v; want 307 and a failure", status, err)
	}
	if hits.Load() != 0 {
		t.Error("the redirect was followed")
	}
}

// TestTransportVerifiesCertificates: without the test server's root the
// system roots apply, and its certificate is refused.
func TestTransportVerifiesCertificates(t *testing.T) {
	srv, n := newCountingServer(t, nil)
	status, err := post(t, NewClient(&Options{AllowPrivate: true}), srv.URL, time.Minute)
	if err == nil || status != 0 {
		t.Errorf("status %d, err %v; want a certificate error", status, err)
	}
	if n.Load() != 0 {
		t.Error("the request reached the server")
	}
}

// TestTransportBodies: only 2xx succeeds; a large body is read only in
// part and does not make a 2xx fail; a body that does not end in time, and
// an answer that does not come in time, are failures.
func TestTransportBodies(t *testing.T) {
	large, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 64 { // 4 MiB: the client stops reading after 20 kB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	slowBody, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	silent, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client leave
		<-r.Context().Done()
	})
	failing, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "no such hook")
	})
	client := NewClient(&Options{AllowPrivate: true, RootCAs: srvRoots(large)})
	if status, err := post(t, client, large.URL, time.Minute); err != nil || status != 200 {
		t.Errorf("large body: status %d, err %v; want success", status, err)
	}
	// The body never ends, so the attempt must time out; its status is
	// known only if the headers arrived before the timeout, which on a
	// loaded machine they may not: a timeout before them is tried again
	// with a longer one, until the headers came in time.
	for timeout := 100 * time.Millisecond; ; timeout *= 2 {
		status, err := post(t, client, slowBody.URL, timeout)
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Errorf("slow body: status %d, err %v; want a timeout", status, err)
			break
		}
		if status == http.StatusAccepted {
			break
		}
		if status != 0 || timeout > 2*time.Minute {
			t.Errorf("slow body: status %d after a timeout of %v; want 202", status, timeout)
			break
		}
	}
	// The server never answers: whenever the timeout comes, it is one.
	if status, err := post(t, client, silent.URL, time.Second); err == nil || status != 0 || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("no answer: status %d, err %v; want a timeout", status, err)
	}
	if status, err := post(t, client, failing.URL, time.Minute); err == nil || status != 404 {
		t.Errorf("404: status %d, err %v; want a failure", status, err)
	}
}

// TestTransportReadsAtMost20kB: at most 20 kB (20,480 bytes) of a
// response is read. A receiver that answers 200, sends exactly that much
// and then never ends its body is a success: the client stops reading at
// the cap instead of waiting for an end that never comes (with a larger
// cap, the attempt would time out).
func TestTransportReadsAtMost20kB(t *testing.T) {
	const limit = 20 << 10
	sent := make(chan int, 1)
	srv, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := w.Write(make([]byte, limit))
		w.(http.Flusher).Flush()
		sent <- n
		<-r.Context().Done() // the body never ends
	})
	client := NewClient(&Options{AllowPrivate: true, RootCAs: srvRoots(srv)})
	if status, err := post(t, client, srv.URL, time.Minute); err != nil || status != 200 {
		t.Errorf("status %d, err %v; want success after reading the first %d bytes", status, err, limit)
	}
	if n := <-sent; n != limit {
		t.Fatalf("the receiver sent %d bytes, want %d", n, limit)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"0", 0, true},
		{"-3", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"99999999999999999", 365 * 24 * time.Hour, true},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.value, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}

func srvRoots(srv *httptest.Server) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return pool
}
