package oidc_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDeclaredBodyTooLargeBeforeContinue: a body declared larger than
// MaxRequestBytes is refused with 413 at once, never with "100 Continue",
// on every endpoint that reads a form; one within the limit gets "100
// Continue".
func TestDeclaredBodyTooLargeBeforeContinue(t *testing.T) {
	p := newProvider(t)
	send := func(t *testing.T, path string, length int) (*http.Response, net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", p.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", path, length)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the response: %v", err)
		}
		return resp, conn, br
	}
	for _, endpoint := range []string{"login", "account", "reset", "token", "revoke", "introspect", "userinfo", "end_session", "authorize"} {
		t.Run(endpoint, func(t *testing.T) {
			resp, _, _ := send(t, "/t/acme/"+endpoint, 65537)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "too large") {
				t.Errorf("status %d, body %q; want 413", resp.StatusCode, body)
			}
		})
	}
	t.Run("within the limit", func(t *testing.T) {
		resp, _, _ := send(t, "/t/acme/login", 65536)
		if resp.StatusCode != http.StatusContinue {
			t.Errorf("status %d, want 100 Continue", resp.StatusCode)
		}
	})
}
