package identity_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// allocated returns how many bytes fn allocated on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestAuthenticateSpendsAHashOnEveryRefusal: an unknown user, a wrong
// password, a user without a password and a disabled user each cost one
// argon2id verification, so that timing does not tell them apart. The
// signal is argon2id's memory, which it allocates on every verification:
// with m = 8 MiB every refusal allocates at least 8 MiB, and a password no
// policy accepts (never hashed, for any login) well under 1 MiB. This
// depends on no clock or machine speed.
func TestAuthenticateSpendsAHashOnEveryRefusal(t *testing.T) {
	const mib = 1 << 20
	params := identity.Argon2Params{Memory: 8 * 1024, Time: 1, Threads: 1}
	e := newTestEnv(t, &identity.Options{PasswordHashing: &params})
	off := e.user("off")
	if err := e.ws.DisableUser(e.ctx, off.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "nopass", Email: "nopass@example.com", FullName: "N"}}); err != nil {
		t.Fatal(err)
	}
	// A first unknown login makes the dummy hash the later ones verify against.
	if _, err := e.ws.Authenticate(e.ctx, "warm-up", "whatever-pass"); err == nil {
		t.Fatal("warm-up login succeeded")
	}
	tests := []struct {
		name            string
		login, password string
		hashed          bool
	}{
		{"unknown user", "ghost", "whatever-pass", true},
		{"unknown email", "ghost@example.com", "whatever-pass", true},
		{"wrong password", "ada", "wrong password", true},
		{"no password", "nopass", "whatever-pass", true},
		{"disabled user, right password", "off", "correct horse battery", true},
		{"disabled user, wrong password", "off", "wrong password", true},
		{"unknown user, 4097 characters", "ghost", strings.Repeat("a", 4097), false},
		{"known user, 4097 characters", "ada", strings.Repeat("a", 4097), false},
		{"unknown user, not UTF-8", "ghost", "whatever\xff", false},
		{"no password, not UTF-8", "nopass", "whatever\xff", false},
	}
	for _, tt := range tests {
		var err error
		n := allocated(func() { _, err = e.ws.Authenticate(e.ctx, tt.login, tt.password) })
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
		if tt.hashed && n < 8*mib {
			t.Errorf("%s: allocated %d bytes, want an argon2id verification (8 MiB or more)", tt.name, n)
		}
		if !tt.hashed && n >= mib {
			t.Errorf("%s: allocated %d bytes, want no hashing (under 1 MiB)", tt.name, n)
		}
	}
}

// TestLoginFailedForUnacceptablePasswords: a login refused for a password
// over 4096 characters or not valid UTF-8 emits login.failed like any
// refused login, with the reason the user's state gives.
func TestLoginFailedForUnacceptablePasswords(t *testing.T) {
	e := newTestEnv(t, nil)
	hook := e.hook(identity.EventLoginFailed)
	if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "nopass", Email: "nopass@example.com", FullName: "N"}}); err != nil {
		t.Fatal(err)
	}
	off := e.user("off")
	if err := e.ws.DisableUser(e.ctx, off.ID); err != nil {
		t.Fatal(err)
	}
	attempts := []struct{ login, password string }{
		{"ada", strings.Repeat("a", 4097)},
		{"ada", adaPassword + "\xff"},
		{"ghost", strings.Repeat("é", 4097)},
		{"nopass", "\xff"},
		{"off", strings.Repeat("a", 5000)},
	}
	for _, a := range attempts {
		_, err := e.ws.Authenticate(e.ctx, a.login, a.password)
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	want := []string{
		`{"login":"ada","reason":"wrong_password","userId":1}`,
		`{"login":"ada","reason":"wrong_password","userId":1}`,
		`{"login":"ghost","reason":"unknown_user"}`,
		`{"login":"nopass","reason":"no_password","userId":2}`,
		`{"login":"off","reason":"wrong_password","userId":3}`,
	}
	var got []string
	for _, p := range e.payloads(hook) {
		data, ok := strings.CutPrefix(p, `{"type":"login.failed","timestamp":"2026-03-14T15:09:26.535897Z","data":`)
		if !ok {
			t.Fatalf("payload %s", p)
		}
		got = append(got, strings.TrimSuffix(data, "}"))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("login.failed data (-want +got):\n%s", diff)
	}
	ds, err := listItems(e.ws.ListDeliveries(e.ctx, hook, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Status != identity.DeliveryPending || d.EventType != identity.EventLoginFailed {
			t.Errorf("delivery %+v, want a pending login.failed", d)
		}
	}
}

// TestLoginFailedLoginCut: the login in login.failed is cut to 255
// characters, has its invalid UTF-8 and its NUL characters replaced by
// U+FFFD whatever its length, and never carries the password.
func TestLoginFailedLoginCut(t *testing.T) {
	e := newTestEnv(t, nil)
	hook := e.hook(identity.EventLoginFailed)
	logins := []string{strings.Repeat("é", 256), strings.Repeat("x", 255), "bad\xffutf8", "nul\x00in", strings.Repeat("\x00", 300)}
	for _, login := range logins {
		if _, err := e.ws.Authenticate(e.ctx, login, "secret-password"); err == nil {
			t.Fatal("login succeeded")
		}
	}
	got := e.payloads(hook)
	wantLogins := []string{strings.Repeat("é", 255), strings.Repeat("x", 255), "bad\uFFFDutf8", "nul\uFFFDin", strings.Repeat("\uFFFD", 255)}
	if len(got) != len(wantLogins) {
		t.Fatalf("%d events, want %d", len(got), len(wantLogins))
	}
	for i, p := range got {
		if !strings.Contains(p, `"login":"`+wantLogins[i]+`","reason":"unknown_user"`) || strings.Contains(p, "secret-password") {
			t.Errorf("event %d: %s", i, p)
		}
	}
}

// TestAuthenticateStoreFailures: a store failure while looking the user
// up or recording login.failed is an internal error, not a refusal; a
// failed rehash after a good password does not fail the login.
func TestAuthenticateStoreFailures(t *testing.T) {
	e := newTestEnv(t, nil)
	e.st.breakMethod("UserIDByUsername", errFlaky)
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()

	e.hook(identity.EventLoginFailed)
	e.st.breakMethod("PutDelivery", errFlaky)
	_, err = e.ws.Authenticate(e.ctx, "ada", "wrong password")
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()

	// An imported PBKDF2 hash is replaced at a good login; if that write
	// fails the login still succeeds and the old hash stays.
	const pbkdf2 = "pbkdf2_sha256$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA="
	users, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "old", Email: "old@example.com", FullName: "O", PasswordHash: pbkdf2}})
	if err != nil {
		t.Fatal(err)
	}
	e.st.breakMethod("PutUser", errFlaky)
	if _, err := e.ws.Authenticate(e.ctx, "old", "correct horse"); err != nil {
		t.Errorf("login with a failing rehash: %v", err)
	}
	e.st.mend()
	if h := e.storedUser(users[0].ID).PasswordHash; h != pbkdf2 {
		t.Errorf("hash after a failed rehash = %q", h)
	}
	if _, err := e.ws.Authenticate(e.ctx, "old", "correct horse"); err != nil {
		t.Fatal(err)
	}
	if h := e.storedUser(users[0].ID).PasswordHash; !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("hash after the next login = %q, want argon2id", h)
	}
}

// storedUser reads a user's record straight from the store.
func (e *testEnv) storedUser(id int64) store.User {
	e.t.Helper()
	var u store.User
	err := e.st.Store.View(e.ctx, func(tx store.Tx) (err error) {
		u, err = tx.User("acme", id)
		return err
	})
	if err != nil {
		e.t.Fatalf("store User(%d): %v", id, err)
	}
	return u
}

// TestSessions: Login, StartSession, VerifySession and Sessions over a
// session's life, on the fake clock.
func TestSessions(t *testing.T) {
	e := newTestEnv(t, &identity.Options{SessionLifetime: 2 * time.Hour})
	start := e.clock.Now()
	created, err := e.ws.Login(e.ctx, "ADA@example.com", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	u, s1, token1 := created.User, created.Session, created.Secret
	want1 := identity.Session{ID: s1.ID, UserID: e.ada.ID, CreatedAt: start, ExpiresAt: start.Add(2 * time.Hour), LastSeenAt: start, AMR: []string{"pwd"}}
	if diff := cmp.Diff(want1, s1); diff != "" || u.ID != e.ada.ID {
		t.Errorf("Login: user %d, session (-want +got):\n%s", u.ID, diff)
	}
	if !strings.HasPrefix(token1, "ids_"+s1.ID+"_") {
		t.Errorf("token %q does not carry the session id %s", token1, s1.ID)
	}
	e.clock.Advance(time.Minute)
	created, err = e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	s2, token2 := created.Session, created.Secret
	want2 := identity.Session{ID: s2.ID, UserID: e.ada.ID, CreatedAt: start.Add(time.Minute),
		ExpiresAt: start.Add(time.Minute + 2*time.Hour), LastSeenAt: start.Add(time.Minute)}
	if diff := cmp.Diff(want2, s2); diff != "" {
		t.Errorf("StartSession (-want +got):\n%s", diff)
	}

	// LastSeenAt moves at most once a minute: at 59 s nothing is written,
	// at 60 s it is.
	e.clock.Advance(59 * time.Second)
	verified, err := e.ws.VerifySession(e.ctx, token2)
	vs, vu := verified.Session, verified.User
	if err != nil || vu.ID != e.ada.ID || !vs.LastSeenAt.Equal(start.Add(time.Minute)) {
		t.Fatalf("VerifySession at 59 s = %+v, %v", vs, err)
	}
	e.clock.Advance(time.Second)
	if verified, err = e.ws.VerifySession(e.ctx, token2); err != nil || !verified.Session.LastSeenAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("VerifySession at 60 s: LastSeenAt %v, %v", verified.Session.LastSeenAt, err)
	}
	if got, err := e.ws.GetSession(e.ctx, s2.ID); err != nil || !got.LastSeenAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("GetSession = %+v, %v; want LastSeenAt stored", got, err)
	}

	// The first session expires two hours after it began; the second a
	// minute later.
	e.clock.Set(start.Add(2*time.Hour - time.Microsecond))
	if _, err := e.ws.VerifySession(e.ctx, token1); err != nil {
		t.Errorf("VerifySession just before expiry: %v", err)
	}
	e.clock.Set(start.Add(2 * time.Hour))
	_, err = e.ws.VerifySession(e.ctx, token1)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := e.ws.VerifySession(e.ctx, token2); err != nil {
		t.Errorf("the second session: %v", err)
	}
	if err := e.ws.RevokeSession(e.ctx, s2.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.VerifySession(e.ctx, token2)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)

	list, err := listItems(e.ws.ListSessions(e.ctx, e.ada.ID, nil))
	if err != nil {
		t.Fatal(err)
	}
	revoked := start.Add(2 * time.Hour)
	want1.LastSeenAt = start.Add(2*time.Hour - time.Microsecond)
	want2.LastSeenAt, want2.RevokedAt = start.Add(2*time.Hour), &revoked
	if diff := cmp.Diff([]identity.Session{want1, want2}, list); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}
	for _, s := range list {
		if s.Active(e.clock.Now()) {
			t.Errorf("session %s active", s.ID)
		}
	}
	other := e.user("bob")
	if list, err := listItems(e.ws.ListSessions(e.ctx, other.ID, nil)); err != nil || list == nil || len(list) != 0 {
		t.Errorf("Sessions of a user without any = %#v, %v; want empty, not nil", list, err)
	}

	// Unknown and malformed tokens, and ids, are refused.
	unknown := "ids_0123456789abcdef_" + token1[len(token1)-43:]
	for _, token := range []string{"", "ids_", unknown, token1[:len(token1)-1], "idk_" + token2[4:], strings.ToUpper(token2)} {
		_, err := e.ws.VerifySession(e.ctx, token)
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	_, err = e.ws.GetSession(e.ctx, "0123456789abcdef")
	identitytest.WantCode(t, err, identity.CodeNotFound)
	identitytest.WantCode(t, e.ws.RevokeSession(e.ctx, "0123456789abcdef"), identity.CodeNotFound)
	_, err = e.ws.Login(e.ctx, "ada", "wrong password")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	_, err = e.ws.CreateSession(e.ctx, 999, nil)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	_, err = listItems(e.ws.ListSessions(e.ctx, 999, nil))
	identitytest.WantCode(t, err, identity.CodeNotFound)
}

// TestSessionStoreFailures: a failing store makes VerifySession and
// StartSession internal errors; a failure to record LastSeenAt does not
// fail the check that asked.
func TestSessionStoreFailures(t *testing.T) {
	e := newTestEnv(t, nil)
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := created.Secret
	e.st.breakMethod("Session", errFlaky)
	_, err = e.ws.VerifySession(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()

	e.st.breakMethod("PutSession", errFlaky)
	_, err = e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.clock.Advance(time.Hour)
	verified, err := e.ws.VerifySession(e.ctx, token)
	s := verified.Session
	if err != nil || !s.LastSeenAt.Equal(e.clock.Now().Add(-time.Hour)) {
		t.Errorf("VerifySession with LastSeenAt unwritable = %+v, %v; want the old LastSeenAt", s, err)
	}
	e.st.mend()
	if verified, err = e.ws.VerifySession(e.ctx, token); err != nil || !verified.Session.LastSeenAt.Equal(e.clock.Now()) {
		t.Errorf("VerifySession = %+v, %v", verified.Session, err)
	}
	e.st.set(true, false)
	_, err = listItems(e.ws.ListSessions(e.ctx, e.ada.ID, nil))
	identitytest.WantCode(t, err, identity.CodeInternal)
	if err := e.ws.RevokeSession(e.ctx, s.ID); err != nil {
		t.Errorf("RevokeSession with reads failing: %v", err) // it reads in its write
	}
	e.st.mend()
}

// TestRefusedLoginWrites: a refused login of a known user writes its
// lockout count (two write transactions: the attempt's reservation and its
// release, which writes the refusal's audit record, and login.failed when
// an endpoint subscribes to it); with lockout off, and for an unknown
// user, a refused login runs one write transaction, its audit record's
// (with login.failed when an endpoint subscribes to it), whoever
// subscribes.
func TestRefusedLoginWrites(t *testing.T) {
	ctx := t.Context()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, nil, nil)
	mustCreateUser(t, ws, "ada")
	refusals := func(login string) int {
		t.Helper()
		updates := 0
		st.arm(func(int) error { updates++; return nil })
		defer st.arm(nil)
		_, err := ws.Authenticate(ctx, login, "wrong password")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
		return updates
	}
	setLockoutOff := func(off bool) {
		t.Helper()
		s, err := ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Lockout.Disabled = off
		if err := ws.UpdateSettings(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, ada, ghost, adaOff int) {
		t.Helper()
		if n := refusals("ada"); n != ada {
			t.Errorf("%s: a known user's refused login ran %d write transactions, want %d", when, n, ada)
		}
		if n := refusals("ghost"); n != ghost {
			t.Errorf("%s: an unknown user's refused login ran %d write transactions, want %d", when, n, ghost)
		}
		setLockoutOff(true)
		if n := refusals("ada"); n != adaOff {
			t.Errorf("%s, lockout off: a known user's refused login ran %d write transactions, want %d", when, n, adaOff)
		}
		setLockoutOff(false)
	}
	check("no subscriber", 2, 1, 1)
	if _, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/identity", Events: []string{"user.created"}}); err != nil {
		t.Fatal(err)
	}
	check("a subscriber of another event", 2, 1, 1)
	if _, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/identity", Events: []string{"login.failed"}}); err != nil {
		t.Fatal(err)
	}
	check("a subscriber", 2, 1, 1)
}

// TestRehashKeepsAPasswordChangedMeanwhile: the upgrade of an imported
// hash at login does not overwrite a password set since the login read
// the user.
func TestRehashKeepsAPasswordChangedMeanwhile(t *testing.T) {
	ctx := t.Context()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, nil, nil)
	const pbkdf2 = "pbkdf2_sha256$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA="
	users, err := ws.ImportUsers(ctx, []identity.ImportedUser{{Username: "old", Email: "old@example.com", FullName: "O", PasswordHash: pbkdf2}})
	if err != nil {
		t.Fatal(err)
	}
	st.arm(func(n int) error {
		if n == 1 { // the rehash, after the login checked the old password
			if err := ws.SetPassword(ctx, users[0].ID, "a brand new password"); err != nil {
				t.Errorf("SetPassword: %v", err)
			}
		}
		return nil
	})
	if _, err := ws.Authenticate(ctx, "old", "correct horse"); err != nil {
		t.Fatal(err)
	}
	st.arm(nil)
	if _, err := ws.Authenticate(ctx, "old", "a brand new password"); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
	_, err = ws.Authenticate(ctx, "old", "correct horse")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
}

// TestSessionTouchNeverMovesBack: a check that read the session before
// another check moved LastSeenAt later does not move it back.
func TestSessionTouchNeverMovesBack(t *testing.T) {
	ctx := t.Context()
	clock := newFakeClock()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, clock, nil)
	ada := mustCreateUser(t, ws, "ada")
	created, err := ws.CreateSession(ctx, ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, token := created.Session, created.Secret
	start := clock.Now()
	clock.Advance(time.Minute)
	st.arm(func(n int) error {
		if n == 1 { // the first check's touch, at start + 1 min
			clock.Advance(time.Minute)
			if _, err := ws.VerifySession(ctx, token); err != nil {
				t.Errorf("the second check: %v", err)
			}
		}
		return nil
	})
	if _, err := ws.VerifySession(ctx, token); err != nil {
		t.Fatal(err)
	}
	st.arm(nil)
	got, err := ws.GetSession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(2 * time.Minute); !got.LastSeenAt.Equal(want) {
		t.Errorf("LastSeenAt = %v, want %v (the later check's)", got.LastSeenAt, want)
	}
}

// TestLockedRefusalWritesItsRecordOnly: a locked account is refused
// with one read transaction and one write, the refusal's audit record
// (login.failed too when an endpoint subscribes to it): the lockout's
// state is not written, and no hash is computed.
func TestLockedRefusalWritesItsRecordOnly(t *testing.T) {
	ctx := t.Context()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, nil, nil)
	mustCreateUser(t, ws, "ada")
	s, err := ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Lockout.Threshold = 1
	if err := ws.UpdateSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Authenticate(ctx, "ada", "wrong password"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Fatalf("first failure: %v", err)
	}
	updates := 0
	st.arm(func(int) error { updates++; return nil })
	defer st.arm(nil)
	for range 3 {
		_, err := ws.Authenticate(ctx, "ada", "wrong password")
		identitytest.WantCode(t, err, identity.CodeLocked)
	}
	if updates != 3 {
		t.Errorf("three refusals of a locked account ran %d write transactions, want 3", updates)
	}
	page, err := ws.ListAuditRecords(ctx, &identity.AuditFilter{Action: "sign_in.failed"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, r := range page.Records {
		reasons = append(reasons, r.Reason)
	}
	slices.Sort(reasons) // written in one microsecond of the fake clock: in no order
	if diff := cmp.Diff([]string{"locked", "locked", "locked", "wrong_password"}, reasons); diff != "" {
		t.Errorf("sign_in.failed reasons (-want +got):\n%s", diff)
	}
}
