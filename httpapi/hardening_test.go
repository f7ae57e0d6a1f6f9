package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// TestInvalidUTF8InBody: a string of the body that is not valid UTF-8,
// as bytes or as \u escapes of lone UTF-16 surrogates, is 422 with rule
// utf8 naming its path, wherever it is: a member the route reads, one it
// ignores, an array element, a nested value, a member name (named by the
// object holding it). encoding/json would have decoded each as U+FFFD.
// Valid escapes, surrogate pairs included, pass.
func TestInvalidUTF8InBody(t *testing.T) {
	const base = "/t/acme/api/v1"
	const attr = base + "/users/1/attributes/tier"
	tests := []struct {
		name         string
		method, path string
		body         string
		fields       []string // nil: accepted
	}{
		{"invalid byte in a member read", "POST", base + "/users", "{\"username\":\"a\xffb\",\"email\":\"b@example.com\",\"fullName\":\"B\",\"password\":\"correct horse\"}", []string{"username utf8"}},
		{"lone high surrogate", "POST", base + "/users", `{"username":"bob","email":"b@example.com","fullName":"B\ud800","password":"correct horse"}`, []string{"fullName utf8"}},
		{"lone high surrogate in capitals", "PUT", attr, `{"value":"\uD83D"}`, []string{"value utf8"}},
		{"lone low surrogate", "PUT", attr, `{"value":"\udc00"}`, []string{"value utf8"}},
		{"high surrogate then a letter", "PUT", attr, `{"value":"\ud800\u0041"}`, []string{"value utf8"}},
		{"high surrogate then another high", "PUT", attr, `{"value":"\ud800\ud800"}`, []string{"value utf8"}},
		{"high surrogate at the end", "PUT", attr, `{"value":"gold\ud83d"}`, []string{"value utf8"}},
		{"pair in the wrong order", "PUT", attr, `{"value":"\ude00\ud83d"}`, []string{"value utf8"}},
		{"high surrogate then an escaped backslash", "PUT", attr, `{"value":"\ud83d\\ude00"}`, []string{"value utf8"}},
		{"UTF-8 encoded surrogate", "PUT", attr, "{\"value\":\"\xed\xa0\x80\"}", []string{"value utf8"}},
		{"overlong encoding", "PUT", attr, "{\"value\":\"\xc0\xaf\"}", []string{"value utf8"}},
		{"truncated sequence", "PUT", attr, "{\"value\":\"\xe2\x82\"}", []string{"value utf8"}},
		{"an ignored member", "PUT", attr, "{\"value\":\"gold\",\"note\":\"\xff\"}", []string{"note utf8"}},
		{"a nested ignored value", "PUT", attr, `{"value":"gold","x":{"y":[1,true,null,{"z":"\udfff"}]}}`, []string{"x.y[3].z utf8"}},
		{"an array element", "POST", base + "/webhooks", `{"url":"https://h.example.com","events":["user.created","user.\udc00"]}`, []string{"events[1] utf8"}},
		{"a member name", "PUT", attr, "{\"value\":\"gold\",\"\xff\":1}", []string{"body utf8"}},
		{"a nested member name", "PUT", attr, `{"value":"gold","x":[{"\ud800":1}]}`, []string{"x[0] utf8"}},
		{"two members, and a wrong type", "POST", base + "/users", "{\"username\":5,\"email\":\"\xff\",\"fullName\":\"\\udc00\",\"password\":\"correct horse\"}",
			[]string{"email utf8", "fullName utf8", "username type"}},
		{"one path once", "PUT", attr, "{\"value\":\"gold\",\"a\":\"\xff\",\"a\":\"\xfe\"}", []string{"a utf8"}},
		{"a body that is a string", "PUT", attr, "\"\xff\"", []string{"body utf8", "body type"}},
		{"a surrogate pair", "PUT", attr, `{"value":"\ud83d\ude00 \uD834\uDD1E"}`, nil},
		{"the first and last surrogate pairs", "PUT", attr, `{"value":"\ud800\udc00 \udbff\udfff"}`, nil},
		{"the characters around the surrogates", "PUT", attr, `{"value":"\ud7ff\ue000"}`, nil},
		{"an escaped backslash before u", "PUT", attr, `{"value":"\\ud800"}`, nil},
		{"other escapes", "PUT", attr, `{"value":"\u00e9\n\"\/\ufffd\uffff"}`, nil},
		{"raw multi-byte text", "PUT", attr, `{"value":"zoë 😀 ĳ"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			rec := e.do(t, tt.method, tt.path, e.allKey, []byte(tt.body))
			if tt.fields == nil {
				wantStatus(t, rec, 204)
				return
			}
			wantProblem(t, rec, 422, "invalid", tt.fields...)
		})
	}
}

// TestInvalidUTF8ChangesNothing: a body refused for its UTF-8 reaches no
// library call, and a valid surrogate pair is stored as its character.
func TestInvalidUTF8ChangesNothing(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	wantProblem(t, e.do(t, "POST", "/t/acme/api/v1/users", e.allKey,
		`{"username":"bob","email":"bob@example.com","fullName":"Bob \ud800","password":"correct horse"}`), 422, "invalid", "fullName utf8")
	wantStatus(t, e.do(t, "PUT", "/t/acme/api/v1/users/1/attributes/mood", e.allKey, `{"value":"\ud83d\ude00"}`), 204)
	list, err := e.ws.ListUsers(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := e.ws.ListAttributes(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{1, "😀"}, []any{list.Total, attrs["mood"]}); diff != "" {
		t.Errorf("users and the stored value (-want +got):\n%s", diff)
	}
}

// TestInvalidUTF8ListsAtMost20: a body full of bad strings is answered
// with the first 20 of them, in the order of the body.
func TestInvalidUTF8ListsAtMost20(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	var body strings.Builder
	body.WriteString(`{"value":"gold"`)
	var want []string
	for i := range 25 {
		fmt.Fprintf(&body, ",\"m%02d\":\"\xff\"", i)
		if i < 20 {
			want = append(want, fmt.Sprintf("m%02d utf8", i))
		}
	}
	body.WriteString("}")
	wantProblem(t, e.do(t, "PUT", "/t/acme/api/v1/users/1/attributes/tier", e.allKey, body.String()), 422, "invalid", want...)
}

// TestControlCharactersInNames: over REST, NUL and bidirectional controls
// are refused in names (rule control_character), and only NUL in an
// attribute value; usernames refuse them by their pattern.
func TestControlCharactersInNames(t *testing.T) {
	const base = "/t/acme/api/v1"
	tests := []struct {
		name         string
		method, path string
		body         string
		status       int
		fields       []string
	}{
		{"username with a right-to-left override", "POST", base + "/users", `{"username":"ad\u202ea","email":"b@example.com","fullName":"B","password":"correct horse"}`, 422, []string{"username pattern"}},
		{"fullName with a right-to-left override", "POST", base + "/users", `{"username":"bob","email":"b@example.com","fullName":"Bob \u202Egnp.exe","password":"correct horse"}`, 422, []string{"fullName control_character"}},
		{"fullName with NUL", "PUT", base + "/users/1", `{"email":"ada@example.com","fullName":"Ada\u0000"}`, 422, []string{"fullName control_character"}},
		{"attribute key with a first strong isolate", "PUT", base + "/users/1/attributes/a%E2%81%A8b", `{"value":"gold"}`, 422, []string{"key control_character"}},
		{"attribute key with NUL", "PUT", base + "/users/1/attributes/a%00b", `{"value":"gold"}`, 422, []string{"key control_character"}},
		{"attribute value with NUL", "PUT", base + "/users/1/attributes/tier", `{"value":"gold\u0000"}`, 422, []string{"value control_character"}},
		{"attribute value with bidirectional controls", "PUT", base + "/users/1/attributes/tier", `{"value":"\u202egold\u202c\u2067\u061c"}`, 204, nil},
		{"claim name with an Arabic letter mark", "PUT", base + "/claim-mappers/tier", `{"claimName":"ti\u061cer"}`, 422, []string{"claimName control_character"}},
		{"mapper attribute key with a left-to-right mark", "PUT", base + "/claim-mappers/ti%E2%80%8Eer", `{"claimName":"tier"}`, 422, []string{"attributeKey control_character"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			rec := e.do(t, tt.method, tt.path, e.allKey, tt.body)
			if tt.fields == nil {
				wantStatus(t, rec, tt.status)
				return
			}
			wantProblem(t, rec, tt.status, "invalid", tt.fields...)
		})
	}
}

// TestDeclaredBodyTooLargeBeforeContinue: a request whose Content-Length
// is over 1 MiB is answered 413 before the body is read, on every route
// that takes one, so a client that sent "Expect: 100-continue" gets the
// 413 instead of "100 Continue" and never sends the body. The requests
// go over a raw connection, which sends the headers only; the deadline
// is generous and nothing is timed. A body within the limit gets its
// "100 Continue", as the control shows.
func TestDeclaredBodyTooLargeBeforeContinue(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	srv := httptest.NewServer(e.api)
	t.Cleanup(srv.Close)
	send := func(t *testing.T, method, path, contentType, headers string) (*http.Response, net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\n%s\r\n",
			method, strings.ReplaceAll(path, "{client}", e.client), e.allKey, contentType, headers)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the response: %v", err)
		}
		return resp, conn, br
	}
	for _, rc := range routeCases() {
		if rc.body == nil {
			continue
		}
		for _, expect := range []struct{ name, header string }{
			{"Expect: 100-continue", "Expect: 100-continue\r\n"},
			{"no Expect", ""},
		} {
			t.Run(rc.method+" "+rc.path+" "+expect.name, func(t *testing.T) {
				contentType := "application/json"
				if _, logo := rc.body.(pngBody); logo {
					contentType = "image/png" // refused as too large, never read
				}
				resp, _, _ := send(t, rc.method, rc.path, contentType, expect.header+"Content-Length: 104857600\r\n")
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				var p struct{ Code string }
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatalf("body %q: %v", body, err)
				}
				if diff := cmp.Diff([]any{413, "body_too_large"}, []any{resp.StatusCode, p.Code}); diff != "" {
					t.Errorf("status and code (-want +got):\n%s\nbody %s", diff, body)
				}
			})
		}
	}
	t.Run("a logo one byte over its bound", func(t *testing.T) {
		resp, _, _ := send(t, "PUT", "/t/acme/api/v1/branding/logo", "image/png",
			fmt.Sprintf("Expect: 100-continue\r\nContent-Length: %d\r\n", identity.MaxLogoBytes+1))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", resp.StatusCode)
		}
	})
	t.Run("within the limit: 100 Continue", func(t *testing.T) {
		const body = `{"value":"gold"}`
		resp, conn, br := send(t, "PUT", "/t/acme/api/v1/users/1/attributes/tier", "application/json", fmt.Sprintf("Expect: 100-continue\r\nContent-Length: %d\r\n", len(body)))
		if resp.StatusCode != http.StatusContinue {
			t.Fatalf("status %d, want 100 Continue", resp.StatusCode)
		}
		io.WriteString(conn, body)
		final, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		final.Body.Close()
		if final.StatusCode != http.StatusNoContent {
			t.Errorf("status after the body %d, want 204", final.StatusCode)
		}
	})
}

// TestFieldErrorsCapped: a body holding 999 empty event names, each a
// problem, is answered with the first 50 field errors and the count of
// the rest, a response a fraction of the request's size, not many times
// it (a 1 MiB body of 349,000 such names once got 28.5 MB); one of 1,001
// names is refused as too long before its items are decoded.
func TestFieldErrorsCapped(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	events := func(n int) string {
		return `{"url":"https://hooks.example.com/x","events":[""` + strings.Repeat(`,""`, n-1) + "]}"
	}
	type problem struct {
		Code       string
		Errors     []struct{ Field, Rule string }
		MoreErrors int
	}
	post := func(body string) (int, problem) {
		t.Helper()
		rec := e.do(t, "POST", "/t/acme/api/v1/webhooks", e.allKey, body)
		var p problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("body %q: %v", rec.Body.String(), err)
		}
		if n := rec.Body.Len(); n > 8<<10 {
			t.Errorf("response of %d bytes to a request of %d", n, len(body))
		}
		return rec.Code, p
	}

	status, p := post(events(999))
	got := []any{status, p.Code, len(p.Errors), p.Errors[0].Field, p.Errors[49].Field, p.MoreErrors}
	if diff := cmp.Diff([]any{422, "invalid", 50, "events[0]", "events[49]", 949}, got); diff != "" {
		t.Errorf("999 names (-want +got):\n%s", diff)
	}
	for _, n := range []int{1000, 1001} {
		status, p = post(events(n))
		got = []any{status, p.Code, len(p.Errors), p.Errors[0].Field, p.Errors[0].Rule, p.MoreErrors}
		want := []any{422, "invalid", 50, "events[0]", "unknown", 950}
		if n > 1000 {
			want = []any{422, "invalid", 1, "events", "max_length", 0}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d names (-want +got):\n%s", n, diff)
		}
	}
}

// TestRequestMemoryBounded: a 1 MiB body of 349,000 empty event names
// costs the handler a few times the body in allocations, not the 43 MB
// it did when every item was decoded and every problem formatted.
func TestRequestMemoryBounded(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	body := `{"url":"https://hooks.example.com/x","events":[""` + strings.Repeat(`,""`, (1<<20-60)/3) + "]}"
	req := httptest.NewRequest("POST", "/t/acme/api/v1/webhooks", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.allKey)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e.api.ServeHTTP(rec, req) // the handler alone, not the tests' OpenAPI check
	runtime.ReadMemStats(&after)
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("a request of %d bytes allocated %d bytes, want at most 16 MiB", len(body), alloc)
	}
}
