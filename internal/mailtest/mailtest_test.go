package mailtest

import (
	"time"

	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"
)

// fatalRecorder is a testing.TB whose Fatalf records the failure and
// ends the goroutine, as testing's does, so that a test can watch
// WaitMessages fail.
type fatalRecorder struct {
	testing.TB
	failure string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Context() context.Context { return context.Background() }

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// waitFailure runs WaitMessagesContext for n messages in a goroutine of
// its own and returns the failure it reported, "" when it returned.
func waitFailure(ctx context.Context, ms *Server, n int) string {
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ms.WaitMessagesContext(ctx, r, n)
	}()
	<-done
	return r.failure
}

// send sends one message to the server, in plain text, with go-smtp's
// client.
func send(t *testing.T, ms *Server, body string) {
	t.Helper()
	msg := "Subject: test\r\n\r\n" + body + "\r\n"
	c, err := smtp.Dial("127.0.0.1:" + strconv.Itoa(ms.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMail("a@acme.test", []string{"b@acme.test"}, strings.NewReader(msg)); err != nil {
		t.Fatal(err)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
}

// TestWaitMessages: the messages that arrived are returned once there are
// enough; a wait whose context ends, whose server closes, or that passes
// WaitBound fails the test instead of waiting on.
func TestWaitMessages(t *testing.T) {
	ms := NewServer(t, Config{})
	send(t, ms, "one")
	send(t, ms, "two")
	msgs := ms.WaitMessages(t, 2)
	var bodies []string
	for _, m := range msgs {
		_, body, _ := strings.Cut(string(m.Data), "\r\n\r\n")
		bodies = append(bodies, body)
	}
	if diff := cmp.Diff([]string{"one\r\n", "two\r\n"}, bodies); diff != "" {
		t.Errorf("messages mismatch (-want +got):\n%s", diff)
	}

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if got, want := waitFailure(cancelled, ms, 3), "2 messages arrived, want 3: context canceled"; got != want {
		t.Errorf("cancelled wait: failure %q, want %q", got, want)
	}
	if got := waitFailure(cancelled, ms, 2); got != "" {
		t.Errorf("a wait for messages that are there failed: %q", got)
	}

	closed := NewServer(t, Config{})
	closed.Close()
	if got, want := waitFailure(t.Context(), closed, 1), "the server was closed with 0 messages, want 1"; got != want {
		t.Errorf("closed server: failure %q, want %q", got, want)
	}
}

// TestWaitMessagesBound: a wait for a message that never comes fails
// after its bound (WaitBound for WaitMessages), saying so.
func TestWaitMessagesBound(t *testing.T) {
	t.Parallel()
	ms := NewServer(t, Config{})
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ms.waitWithin(r, 1, 100*time.Millisecond)
	}()
	<-done
	if want := "0 messages arrived, want 1: none more within 100ms"; r.failure != want {
		t.Errorf("failure %q, want %q", r.failure, want)
	}
}
