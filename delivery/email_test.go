package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/mailtest"
	"github.com/identitylib/identity/internal/testutil"
)

// setSMTP gives the env's workspace the SMTP settings m (nil: none).
func (e *dlvEnv) setSMTP(m *identity.SMTPSettings) {
	e.t.Helper()
	s, err := e.ws.GetSettings(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	s.SMTP = m
	if err := e.ws.UpdateSettings(context.Background(), s); err != nil {
		e.t.Fatal(err)
	}
}

func (e *dlvEnv) emailJobs() []identity.Delivery {
	e.t.Helper()
	jobs, err := listItems(e.ws.ListEmailJobs(context.Background(), nil))
	if err != nil {
		e.t.Fatal(err)
	}
	return jobs
}

// waitEmailJobs waits until the workspace's email jobs satisfy ok.
func (e *dlvEnv) waitEmailJobs(what string, ok func([]identity.Delivery) bool) []identity.Delivery {
	e.t.Helper()
	var jobs []identity.Delivery
	waitFor(e.t, what, func() bool {
		jobs = e.emailJobs()
		return ok(jobs)
	})
	return jobs
}

// mailUser creates a user with the name and full name.
func (e *dlvEnv) mailUser(name, fullName string) identity.User {
	e.t.Helper()
	u, err := e.ws.CreateUser(context.Background(), identity.NewUser{
		Username: name, Email: name + "@example.com", FullName: fullName, Password: "correct horse battery",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

func (e *dlvEnv) getUser(id int64) identity.User {
	e.t.Helper()
	u, err := e.ws.GetUser(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// jobSummary is what the tests compare of an email job.
type jobSummary struct {
	UserID     int64
	Status     identity.DeliveryStatus
	Attempts   int
	LastStatus int
	LastError  string
}

func summarize(jobs []identity.Delivery) []jobSummary {
	out := make([]jobSummary, len(jobs))
	for i, j := range jobs {
		out[i] = jobSummary{j.UserID, j.Status, j.Attempts, j.LastStatus, j.LastError}
	}
	return out
}

// TestEmailVerificationArrivesAndConfirms: creating a user in a workspace
// with SMTP settings sends one email through a real SMTP server, to the
// user, with subject, From, Date, Message-ID, a text and an HTML part
// that both greet the user by name (escaped in HTML) and carry the same
// link, whose token ConfirmEmail accepts. The job is an email job, not a
// webhook delivery.
func TestEmailVerificationArrivesAndConfirms(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{})
	env.setSMTP(ms.Settings(identity.SMTPNoTLS))
	rc := newDlvReceiver(t, nil)
	hook := env.hook(rc.url("/hook"), string(identity.EventUserCreated), string(identity.EventUserUpdated))
	env.start(env.options(dlvRoots(rc)))

	u := env.mailUser("ada", `Ada <b>"Countess"</b> Lovelace`)
	if u.EmailVerified {
		t.Fatal("a new user's email is verified")
	}
	msgs := ms.WaitMessages(t, 1)
	env.waitEmailJobs("the job to succeed", settled)
	got := msgs[0]
	if got.From != "noreply@acme.test" || !cmp.Equal(got.To, []string{"ada@example.com"}) {
		t.Errorf("envelope: from %q to %q", got.From, got.To)
	}
	p := mailtest.Parse(t, got.Data)
	if p.Subject != "Verify your email address for acme" {
		t.Errorf("Subject = %q", p.Subject)
	}
	if diff := cmp.Diff(&mail.Address{Name: `Ada <b>"Countess"</b> Lovelace`, Address: "ada@example.com"}, p.To); diff != "" {
		t.Errorf("To mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&mail.Address{Name: "Acme", Address: "noreply@acme.test"}, p.From); diff != "" {
		t.Errorf("From mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"text/plain; charset=utf-8", "text/html; charset=utf-8"}, p.Types); diff != "" {
		t.Errorf("parts mismatch (-want +got):\n%s", diff)
	}
	for _, h := range []string{"Date", "Message-ID", "MIME-Version"} {
		if p.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if _, err := p.Header.Date(); err != nil {
		t.Errorf("Date: %v", err)
	}
	if !strings.HasSuffix(p.Header.Get("Message-ID"), "@acme.test>") {
		t.Errorf("Message-ID = %q", p.Header.Get("Message-ID"))
	}
	if !strings.Contains(p.Plain, `Hello Ada <b>"Countess"</b> Lovelace,`) || !strings.Contains(p.Plain, "24 hours") {
		t.Errorf("text part:\n%s", p.Plain)
	}
	if !strings.Contains(p.HTML, "Hello Ada &lt;b&gt;&#34;Countess&#34;&lt;/b&gt; Lovelace,") || strings.Contains(p.HTML, "<b>") {
		t.Errorf("HTML part does not escape the name:\n%s", p.HTML)
	}
	if want := "https://app.acme.test/verify?token=" + p.Token + "&lang=en"; p.Token == "" || p.Link != want {
		t.Errorf("link = %q, want %q", p.Link, want)
	}
	if p.HTMLLink() != p.Link {
		t.Errorf("HTML link = %q, text link %q", p.HTMLLink(), p.Link)
	}

	confirmed, err := env.ws.ConfirmEmail(context.Background(), p.Token)
	if err != nil {
		t.Fatalf("ConfirmEmail: %v", err)
	}
	if !confirmed.EmailVerified || !env.getUser(u.ID).EmailVerified {
		t.Errorf("after ConfirmEmail: returned %+v, stored %+v", confirmed, env.getUser(u.ID))
	}

	want := []jobSummary{{UserID: u.ID, Status: identity.DeliverySucceeded, Attempts: 1, LastStatus: 250}}
	if diff := cmp.Diff(want, summarize(env.emailJobs())); diff != "" {
		t.Errorf("email jobs mismatch (-want +got):\n%s", diff)
	}
	if jobs := env.emailJobs(); jobs[0].EndpointID != 0 || jobs[0].EventType != identity.EmailVerificationJob {
		t.Errorf("email job = %+v", jobs[0])
	}
	// The webhook endpoint sees user.created and the verification's
	// user.updated, and no email job.
	ds := env.waitDeliveries(hook.Endpoint.ID, "two webhook deliveries", func(ds []identity.Delivery) bool { return len(ds) == 2 })
	if ds[0].EventType != identity.EventUserCreated || ds[1].EventType != identity.EventUserUpdated {
		t.Errorf("webhook deliveries = %+v", ds)
	}
	if _, err := listItems(env.ws.ListDeliveries(context.Background(), 0, nil)); !errors.Is(err, identity.ErrNotFound) {
		t.Errorf("Deliveries(0) = %v, want not found", err)
	}
}

// TestEmailNoSettingsNothingSent: without SMTP settings neither creating a
// user nor changing its email queues anything, and the server hears
// nothing.
func TestEmailNoSettingsNothingSent(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{})
	d := env.start(env.options(nil))
	u := env.user("ada")
	if _, err := env.ws.UpdateUser(context.Background(), u.ID, identity.UserUpdate{Email: "ada@lovelace.test", FullName: "Ada"}); err != nil {
		t.Fatal(err)
	}
	if jobs := env.emailJobs(); len(jobs) != 0 {
		t.Errorf("email jobs without SMTP settings: %+v", jobs)
	}
	st, err := d.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 0 {
		t.Errorf("pending = %d", st.Pending)
	}
	d.Stop()
	if n := ms.Connections(); n != 0 {
		t.Errorf("the server got %d connections", n)
	}
	if err := env.ws.SendVerificationEmail(context.Background(), u.ID); !errors.Is(err, identity.ErrConflict) {
		t.Errorf("SendVerificationEmail without SMTP settings = %v, want conflict", err)
	}
}

// TestEmailConfirmFlipsOnce: confirming verifies the email and emits one
// user.updated; confirming again with the same token is ErrTokenUsed and
// the email stays verified, with no second event.
func TestEmailConfirmFlipsOnce(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{})
	env.setSMTP(ms.Settings(identity.SMTPNoTLS))
	rc := newDlvReceiver(t, nil)
	hook := env.hook(rc.url("/hook"), string(identity.EventUserUpdated))
	env.start(env.options(dlvRoots(rc)))
	u := env.user("ada")
	token := mailtest.Parse(t, ms.WaitMessages(t, 1)[0].Data).Token

	var verified []bool
	var codes []identity.Code
	// Confirming is a write of the user: a new version, once.
	versions := []int64{env.getUser(u.ID).Version}
	for range 2 {
		got, err := env.ws.ConfirmEmail(context.Background(), token)
		verified = append(verified, got.EmailVerified, env.getUser(u.ID).EmailVerified)
		codes = append(codes, identity.ErrorCode(err))
		versions = append(versions, env.getUser(u.ID).Version)
		if err == nil && got.Version != versions[len(versions)-1] {
			t.Errorf("ConfirmEmail returned version %d, stored %d", got.Version, versions[len(versions)-1])
		}
	}
	if versions[1] == versions[0] || versions[2] != versions[1] {
		t.Errorf("versions before, after the confirmation and after its repeat: %v; want a change, then none", versions)
	}
	if diff := cmp.Diff([]bool{true, true, false, true}, verified); diff != "" {
		t.Errorf("verified (returned, stored) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]identity.Code{"", identity.CodeTokenUsed}, codes); diff != "" {
		t.Errorf("codes mismatch (-want +got):\n%s", diff)
	}
	if ds := env.deliveries(hook.Endpoint.ID); len(ds) != 1 {
		t.Errorf("user.updated deliveries = %d, want 1", len(ds))
	}
	if err := env.ws.SendVerificationEmail(context.Background(), u.ID); !errors.Is(err, identity.ErrConflict) {
		t.Errorf("SendVerificationEmail for a verified email = %v, want conflict", err)
	}
}

// TestConfirmEmailErrors: malformed, unknown, forged, expired, used and
// superseded tokens are each refused with their own code, and none
// verifies anything. The lifetime is the workspace's TokenLifetime.
func TestConfirmEmailErrors(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	ms := mailtest.NewServer(t, mailtest.Config{})
	settings := ms.Settings(identity.SMTPNoTLS)
	settings.TokenLifetime = time.Hour
	env.setSMTP(settings)
	env.start(env.options(nil))
	ctx := context.Background()

	// tokenOf returns the token of the nth email once its job is
	// recorded, so that moving the clock cannot expire a lease in flight.
	tokenOf := func(n int) string {
		t.Helper()
		msgs := ms.WaitMessages(t, n)
		env.waitEmailJobs("the jobs to settle", settled)
		p := mailtest.Parse(t, msgs[n-1].Data)
		if !strings.Contains(p.Plain, "expires in 1 hour") {
			t.Errorf("text part does not give the lifetime:\n%s", p.Plain)
		}
		return p.Token
	}
	used := env.user("used")
	usedToken := tokenOf(1)
	if _, err := env.ws.ConfirmEmail(ctx, usedToken); err != nil {
		t.Fatal(err)
	}
	expiring := env.user("expiring")
	expiringToken := tokenOf(2)
	clock.Advance(time.Hour - time.Second)
	moved := env.user("moved")
	movedToken := tokenOf(3)
	if _, err := env.ws.UpdateUser(ctx, moved.ID, identity.UserUpdate{Email: "moved@elsewhere.test", FullName: "Moved"}); err != nil {
		t.Fatal(err)
	}
	tokenOf(4) // the mail to the new address
	other := env.user("other")
	otherToken := tokenOf(5)
	clock.Advance(time.Second) // expiring's hour is over; other's is not

	id, secret, _ := strings.Cut(strings.TrimPrefix(otherToken, "idv_"), "_")
	forged := "idv_" + id + "_" + strings.Repeat("A", len(secret))
	unknown := "idv_0123456789abcdef_" + secret
	tests := []struct {
		name  string
		token string
		want  identity.Code
	}{
		{"empty", "", identity.CodeTokenInvalid},
		{"malformed", "idv_nothing", identity.CodeTokenInvalid},
		{"session prefix", "ids_" + strings.TrimPrefix(otherToken, "idv_"), identity.CodeTokenInvalid},
		{"unknown id", unknown, identity.CodeTokenInvalid},
		{"wrong secret", forged, identity.CodeTokenInvalid},
		{"expired", expiringToken, identity.CodeTokenExpired},
		{"used", usedToken, identity.CodeTokenUsed},
		{"address changed", movedToken, identity.CodeTokenInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.ws.ConfirmEmail(ctx, tt.token)
			if got := identity.ErrorCode(err); got != tt.want {
				t.Errorf("ConfirmEmail = %v, want code %s", err, tt.want)
			}
		})
	}
	if !errors.Is(func() error { _, err := env.ws.ConfirmEmail(ctx, expiringToken); return err }(), identity.ErrTokenExpired) {
		t.Error("an expired token does not match ErrTokenExpired")
	}
	verified := map[string]bool{}
	for _, u := range []identity.User{used, expiring, moved} {
		verified[u.Username] = env.getUser(u.ID).EmailVerified
	}
	if diff := cmp.Diff(map[string]bool{"used": true, "expiring": false, "moved": false}, verified); diff != "" {
		t.Errorf("verified mismatch (-want +got):\n%s", diff)
	}
	// The token made just before is still good.
	if _, err := env.ws.ConfirmEmail(ctx, otherToken); err != nil {
		t.Errorf("a token within its lifetime: %v", err)
	}
	if !env.getUser(other.ID).EmailVerified {
		t.Error("other not verified")
	}
	if n := len(ms.Messages()); n != 5 {
		t.Errorf("%d emails, want 5", n)
	}
	// A token of one workspace means nothing in another.
	ws2, err := env.svc.CreateWorkspace(ctx, "other-ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws2.ConfirmEmail(ctx, otherToken); !errors.Is(err, identity.ErrTokenInvalid) {
		t.Errorf("a token in another workspace: %v", err)
	}
}

// TestEmailRetriesUntilServerIsBack: with the server down the first
// attempt fails and the job waits for its retry, as webhook deliveries
// do; once the server is back, the retry delivers the only email, and its
// token works.
func TestEmailRetriesUntilServerIsBack(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	ms := mailtest.NewServer(t, mailtest.Config{})
	ms.SetDown(true)
	env.setSMTP(ms.Settings(identity.SMTPNoTLS))
	env.start(env.options(nil))
	u := env.user("ada")

	jobs := env.waitEmailJobs("the first attempt", attempted(1))
	job := jobs[0]
	if job.Status != identity.DeliveryPending || job.LastError == "" || job.LastStatus != 0 {
		t.Fatalf("after the failed attempt: %+v", job)
	}
	wait, want := job.NextAttemptAt.Sub(job.LastAttemptAt), identity.DefaultRetryDelays()[0]
	if wait < want*8/10 || wait > want*12/10 {
		t.Errorf("retry after %v, want %v ±20%%", wait, want)
	}
	if n := len(ms.Messages()); n != 0 {
		t.Fatalf("%d messages while down", n)
	}

	ms.SetDown(false)
	clock.Set(job.NextAttemptAt)
	msgs := ms.WaitMessages(t, 1)
	jobs = env.waitEmailJobs("the retry to succeed", settled)
	if diff := cmp.Diff([]jobSummary{{UserID: u.ID, Status: identity.DeliverySucceeded, Attempts: 2, LastStatus: 250}}, summarize(jobs)); diff != "" {
		t.Errorf("email jobs mismatch (-want +got):\n%s", diff)
	}
	if len(msgs) != 1 {
		t.Errorf("%d messages, want 1", len(msgs))
	}
	if _, err := env.ws.ConfirmEmail(context.Background(), mailtest.Parse(t, msgs[0].Data).Token); err != nil {
		t.Errorf("ConfirmEmail with the retry's token: %v", err)
	}
}

// TestEmailSlowServerDoesNotDelayCreateUser: with a server that accepts
// connections but says nothing, CreateUser returns with the job queued;
// the dispatcher's connection is waiting at the server, which has taken
// no message. Released, the server gets the email.
func TestEmailSlowServerDoesNotDelayCreateUser(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{})
	release := ms.Hold()
	t.Cleanup(release)
	env.setSMTP(ms.Settings(identity.SMTPNoTLS))
	opts := env.options(nil)
	opts.AttemptTimeout = time.Hour // nothing but the release ends the attempt
	env.start(opts)

	created := make(chan identity.User, 1)
	go func() {
		u, err := env.ws.CreateUser(context.Background(), identity.NewUser{
			Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "correct horse battery",
		})
		if err != nil {
			t.Error(err)
		}
		created <- u
	}()
	var u identity.User
	select {
	case u = <-created: // while the server holds everything
	case <-time.After(dlvWait):
		t.Fatal("CreateUser waits for the SMTP server")
	}
	waitFor(t, "the dispatcher to connect", func() bool { return ms.Connections() > 0 })
	if n := len(ms.Messages()); n != 0 {
		t.Fatalf("the held server took %d messages", n)
	}
	if diff := cmp.Diff([]jobSummary{{UserID: u.ID, Status: identity.DeliveryPending}}, summarize(env.emailJobs())); diff != "" {
		t.Errorf("email jobs mismatch (-want +got):\n%s", diff)
	}
	release()
	ms.WaitMessages(t, 1)
	env.waitEmailJobs("the job to succeed", settled)
}

// TestEmailChangeSendsToNewAddress: changing the email unverifies it and
// sends a new email to the new address; the link sent to the old address
// no longer verifies, the new one does. Changing only the full name sends
// nothing.
func TestEmailChangeSendsToNewAddress(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{})
	env.setSMTP(ms.Settings(identity.SMTPNoTLS))
	env.start(env.options(nil))
	ctx := context.Background()
	u := env.user("ada")
	first := mailtest.Parse(t, ms.WaitMessages(t, 1)[0].Data)
	if _, err := env.ws.ConfirmEmail(ctx, first.Token); err != nil {
		t.Fatal(err)
	}
	env.waitEmailJobs("the first job", settled)

	changed, err := env.ws.UpdateUser(ctx, u.ID, identity.UserUpdate{Email: "ada@lovelace.test", FullName: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if changed.EmailVerified {
		t.Error("a changed email is still verified")
	}
	msgs := ms.WaitMessages(t, 2)
	second := mailtest.Parse(t, msgs[1].Data)
	if !cmp.Equal(msgs[1].To, []string{"ada@lovelace.test"}) || second.To.Address != "ada@lovelace.test" {
		t.Errorf("second email to %q (%v)", msgs[1].To, second.To)
	}
	// The first token is used; make an unused one for the old address by
	// asking again before changing once more.
	if err := env.ws.SendVerificationEmail(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	third := mailtest.Parse(t, ms.WaitMessages(t, 3)[2].Data)
	if _, err := env.ws.UpdateUser(ctx, u.ID, identity.UserUpdate{Email: "ada@analytical.test", FullName: "Ada"}); err != nil {
		t.Fatal(err)
	}
	fourth := mailtest.Parse(t, ms.WaitMessages(t, 4)[3].Data)
	for _, old := range []string{second.Token, third.Token} {
		if _, err := env.ws.ConfirmEmail(ctx, old); !errors.Is(err, identity.ErrTokenInvalid) {
			t.Errorf("a token for an old address: %v, want ErrTokenInvalid", err)
		}
	}
	if env.getUser(u.ID).EmailVerified {
		t.Error("verified by a token for an old address")
	}
	if _, err := env.ws.ConfirmEmail(ctx, fourth.Token); err != nil {
		t.Errorf("the newest token: %v", err)
	}
	if _, err := env.ws.UpdateUser(ctx, u.ID, identity.UserUpdate{Email: "ada@analytical.test", FullName: "Ada L."}); err != nil {
		t.Fatal(err)
	}
	if !env.getUser(u.ID).EmailVerified {
		t.Error("a full name change unverified the email")
	}
	if n := len(env.emailJobs()); n != 4 {
		t.Errorf("%d email jobs, want 4", n)
	}
}

// TestEmailJobsDroppedUnsent: a job whose user's email changed before it
// was sent, or whose workspace lost its SMTP settings, fails at once with
// a clear LastError and sends nothing; only the newest address gets mail.
// RetryDelivery queues a failed job again.
func TestEmailJobsDroppedUnsent(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{})
	settings := ms.Settings(identity.SMTPNoTLS)
	env.setSMTP(settings)
	ctx := context.Background()

	// Two jobs for ada, the first for an address she no longer has.
	ada := env.user("ada")
	if _, err := env.ws.UpdateUser(ctx, ada.ID, identity.UserUpdate{Email: "ada@new.test", FullName: "Ada"}); err != nil {
		t.Fatal(err)
	}
	d := env.start(env.options(nil))
	jobs := env.waitEmailJobs("ada's jobs to settle", settled)
	want := []jobSummary{
		{UserID: ada.ID, Status: identity.DeliveryFailed, Attempts: 1, LastError: "email changed: only the newest address gets mail"},
		{UserID: ada.ID, Status: identity.DeliverySucceeded, Attempts: 1, LastStatus: 250},
	}
	if diff := cmp.Diff(want, summarize(jobs)); diff != "" {
		t.Errorf("email jobs mismatch (-want +got):\n%s", diff)
	}
	if msgs := ms.WaitMessages(t, 1); len(msgs) != 1 || !cmp.Equal(msgs[0].To, []string{"ada@new.test"}) {
		t.Errorf("messages: %+v", msgs)
	}
	d.Stop()

	// bob's job is queued, then the settings go, then carl comes (no job).
	bob := env.user("bob")
	env.setSMTP(nil)
	env.user("carl")
	d = env.start(env.options(nil))
	jobs = env.waitEmailJobs("bob's job to settle", settled)
	want = append(want, jobSummary{UserID: bob.ID, Status: identity.DeliveryFailed, Attempts: 1,
		LastError: "SMTP is not configured in the workspace any more"})
	if diff := cmp.Diff(want, summarize(jobs)); diff != "" {
		t.Errorf("email jobs mismatch (-want +got):\n%s", diff)
	}
	st, err := d.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Attempts != 0 || st.Exhausted != 1 {
		t.Errorf("stats = %+v", st)
	}
	if n := len(ms.Messages()); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}

	env.setSMTP(settings)
	if err := env.ws.RetryDelivery(ctx, jobs[2].ID); err != nil {
		t.Fatal(err)
	}
	msgs := ms.WaitMessages(t, 2)
	if !cmp.Equal(msgs[1].To, []string{"bob@example.com"}) {
		t.Errorf("retried job sent to %q", msgs[1].To)
	}
}

// TestEmailRecipientRefused: a server refusing the recipient with a 5xx
// reply fails the job at once, with the reply code kept.
func TestEmailRecipientRefused(t *testing.T) {
	env := newDlvEnv(t, nil)
	ms := mailtest.NewServer(t, mailtest.Config{RefuseRcpt: true})
	env.setSMTP(ms.Settings(identity.SMTPNoTLS))
	env.start(env.options(nil))
	env.user("ada")
	jobs := env.waitEmailJobs("the job to settle", settled)
	if j := jobs[0]; j.Status != identity.DeliveryFailed || j.Attempts != 1 || j.LastStatus != 550 ||
		!strings.Contains(j.LastError, "RCPT TO") || !strings.Contains(j.LastError, "no such mailbox") {
		t.Errorf("job = %+v", j)
	}
}

// TestEmailTLSAndLogin: implicit TLS and STARTTLS with a login reach the
// server with its certificate verified against DeliveryOptions.RootCAs; a
// server without STARTTLS, an untrusted certificate or a wrong password
// fail the attempt and send nothing. Neither the SMTP password nor a
// token appears in the dispatcher's log or in LastError.
func TestEmailTLSAndLogin(t *testing.T) {
	tests := []struct {
		name    string
		server  mailtest.TLSMode
		mode    identity.SMTPTLSMode
		trusted bool
		login   bool
		wrongPW bool
		wantErr string // "" for success
	}{
		{name: "implicit TLS", server: mailtest.ImplicitTLS, mode: identity.SMTPImplicitTLS, trusted: true},
		{name: "STARTTLS with login", server: mailtest.StartTLS, mode: identity.SMTPStartTLS, trusted: true, login: true},
		{name: "default mode is STARTTLS", server: mailtest.StartTLS, mode: "", trusted: true},
		{name: "STARTTLS not offered", server: mailtest.Plain, mode: identity.SMTPStartTLS, trusted: true, wantErr: "STARTTLS"},
		{name: "untrusted certificate", server: mailtest.ImplicitTLS, mode: identity.SMTPImplicitTLS, wantErr: "certificate"},
		{name: "untrusted STARTTLS certificate", server: mailtest.StartTLS, mode: identity.SMTPStartTLS, wantErr: "certificate"},
		{name: "wrong password", server: mailtest.StartTLS, mode: identity.SMTPStartTLS, trusted: true, login: true, wrongPW: true, wantErr: "authenticating"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newDlvEnv(t, nil)
			cfg := mailtest.Config{TLS: tt.server}
			if tt.login {
				cfg.Username, cfg.Password = "mailer", "s3cret-smtp-pass"
			}
			ms := mailtest.NewServer(t, cfg)
			settings := ms.Settings(tt.mode)
			if tt.wrongPW {
				settings.Password = "not-the-pass-word"
			}
			env.setSMTP(settings)
			var logs testutil.SyncBuffer
			opts := env.options(nil)
			if tt.trusted {
				opts.RootCAs = ms.Roots()
			}
			opts.Retries = []time.Duration{} // one attempt
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			d := env.start(opts)
			env.user("ada")
			jobs := env.waitEmailJobs("the job to settle", settled)
			d.Stop()
			j := jobs[0]
			if tt.wantErr == "" {
				if j.Status != identity.DeliverySucceeded || len(ms.Messages()) != 1 {
					t.Fatalf("job = %+v, %d messages", j, len(ms.Messages()))
				}
			} else if j.Status != identity.DeliveryFailed || !strings.Contains(j.LastError, tt.wantErr) || len(ms.Messages()) != 0 {
				t.Errorf("job = %+v, want failed with %q; %d messages", j, tt.wantErr, len(ms.Messages()))
			}
			out := logs.String()
			for _, secret := range []string{settings.Password, "idv_"} {
				if secret != "" && (strings.Contains(out, secret) || strings.Contains(j.LastError, secret)) {
					t.Errorf("%q in the log or LastError:\n%s\n%s", secret, out, j.LastError)
				}
			}
			if !strings.Contains(out, "email attempt") {
				t.Errorf("no log line for the attempt:\n%s", out)
			}
		})
	}
}

// TestEmailNames: names with markup, quotes, accents and the longest
// allowed non-ASCII full name reach the To header intact through RFC
// TestSMTPPasswordNeverReturned: Settings never returns the password, in
// the struct or its JSON, only PasswordSet; an update without password
// keeps it while host and username stay, and asks for it otherwise. The
// kept password still logs in.
func TestSMTPPasswordNeverReturned(t *testing.T) {
	env := newDlvEnv(t, nil)
	ctx := context.Background()
	ms := mailtest.NewServer(t, mailtest.Config{Username: "mailer", Password: "s3cret-smtp-pass"})
	settings := ms.Settings(identity.SMTPNoTLS)
	env.setSMTP(settings)

	read := func() identity.Settings {
		t.Helper()
		s, err := env.ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "s3cret-smtp-pass") || s.SMTP.Password != "" {
			t.Fatalf("Settings returns the password: %s", b)
		}
		return s
	}
	s := read()
	want := *settings
	want.Password, want.PasswordSet = "", true
	if diff := cmp.Diff(&want, s.SMTP); diff != "" {
		t.Errorf("settings read back mismatch (-want +got):\n%s", diff)
	}

	// What was read, written back unchanged, keeps the password.
	s.SMTP.FromName = "Acme Inc."
	if err := env.ws.UpdateSettings(ctx, s); err != nil {
		t.Fatalf("update without password: %v", err)
	}
	if !read().SMTP.PasswordSet {
		t.Error("the password was dropped")
	}
	env.start(env.options(nil))
	env.user("ada")
	ms.WaitMessages(t, 1) // the server requires the login

	// Another host or username needs the password again.
	for _, mod := range []func(*identity.SMTPSettings){
		func(m *identity.SMTPSettings) { m.Host = "localhost" },
		func(m *identity.SMTPSettings) { m.Username = "other" },
	} {
		changed := read()
		mod(changed.SMTP)
		err := env.ws.UpdateSettings(ctx, changed)
		if e, ok := errors.AsType[*identity.Error](err); !ok || len(e.Fields) != 1 || e.Fields[0].Field != "smtp.password" {
			t.Errorf("update of host or username without password = %v", err)
		}
	}
	// Without a username there is no password.
	noLogin := read()
	noLogin.SMTP.Username = ""
	if err := env.ws.UpdateSettings(ctx, noLogin); err != nil {
		t.Fatal(err)
	}
	if read().SMTP.PasswordSet {
		t.Error("a password is kept without a username")
	}
}
