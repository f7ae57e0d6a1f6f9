package identitytest

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// event is a queued delivery's payload, decoded.
type event struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// endpoint creates an endpoint subscribed to events and returns its id.
func (e *env) endpoint(events ...identity.EventType) int64 {
	e.t.Helper()
	names := make([]string, len(events))
	for i, ev := range events {
		names[i] = string(ev)
	}
	created, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/x", Events: names})
	if err != nil {
		e.t.Fatal(err)
	}
	return created.Endpoint.ID
}

// queued returns the deliveries of an endpoint straight from the store.
func (e *env) queued(endpointID int64) []store.Delivery {
	e.t.Helper()
	var ds []store.Delivery
	err := e.store.View(e.ctx, func(tx store.Tx) (err error) {
		ds, err = tx.Deliveries(e.ws.Slug(), endpointID)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}

// events decodes the payloads of an endpoint's deliveries, in order.
func (e *env) events(endpointID int64) []event {
	e.t.Helper()
	var out []event
	for _, d := range e.queued(endpointID) {
		var ev event
		if err := json.Unmarshal(d.Payload, &ev); err != nil {
			e.t.Fatalf("payload %q: %v", d.Payload, err)
		}
		if ev.Type != d.EventType {
			e.t.Errorf("payload type %q, delivery type %q", ev.Type, d.EventType)
		}
		out = append(out, ev)
	}
	return out
}

func eventTypes(evs []event) []string {
	types := make([]string, len(evs))
	for i, ev := range evs {
		types[i] = ev.Type
	}
	return types
}

func (e *env) pending() int {
	e.t.Helper()
	var n int
	err := e.store.View(e.ctx, func(tx store.Tx) (err error) {
		n, err = tx.PendingDeliveries()
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func testRuleEvents(t *testing.T, e *env) {
	e.roles(5) // before the endpoints: role.created is not the point here
	all := e.endpoint(identity.EventTypes()...)
	createdOnly := e.endpoint(identity.EventUserCreated)
	u := e.user("ada")
	if _, err := e.ws.UpdateUser(e.ctx, u.ID, identity.UserUpdate{Email: "countess@example.com", FullName: "Ada L"}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second assignment changes nothing and emits nothing
		if err := e.ws.AssignRole(e.ctx, u.ID, 5); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ws.RemoveRole(e.ctx, u.ID, 5); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.SetPassword(e.ctx, u.ID, "another passphrase"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.ws.DisableUser(e.ctx, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ws.EnableUser(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "migrated", Email: "m@example.com", FullName: "M"}}); err != nil {
		t.Fatal(err)
	}

	want := []string{"user.created", "user.updated", "user.role.assigned", "user.role.removed",
		"user.password.changed", "user.disabled", "user.enabled"}
	evs := e.events(all)
	if diff := cmp.Diff(want, eventTypes(evs)); diff != "" {
		t.Errorf("events of the all-types endpoint (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user.created"}, eventTypes(e.events(createdOnly))); diff != "" {
		t.Errorf("events of the user.created endpoint (-want +got):\n%s", diff)
	}
	if len(evs) != len(want) {
		t.FailNow()
	}
	var created identity.User
	if err := json.Unmarshal(evs[0].Data, &created); err != nil || created.ID != u.ID || created.Username != "ada" || !created.Enabled {
		t.Errorf("user.created data = %s (%v)", evs[0].Data, err)
	}
	if got := string(evs[2].Data); got != `{"userId":1,"roleId":5}` {
		t.Errorf("user.role.assigned data = %s", got)
	}
	if got := string(evs[4].Data); got != `{"userId":1}` {
		t.Errorf("user.password.changed data = %s", got)
	}
	if !evs[0].Timestamp.Equal(testNow.Truncate(time.Microsecond)) {
		t.Errorf("timestamp = %v, want %v", evs[0].Timestamp, testNow)
	}

	// One event fans out to one pending delivery per endpoint, sharing the
	// event's id, due at once.
	a, c := e.queued(all)[0], e.queued(createdOnly)[0]
	if a.EventID != c.EventID || !strings.HasPrefix(a.EventID, "msg_") || a.ID == c.ID {
		t.Errorf("fan-out deliveries %+v and %+v", a, c)
	}
	if a.Status != store.DeliveryPending || a.Attempts != 0 || !a.NextAttemptAt.Equal(testNow.Truncate(time.Microsecond)) {
		t.Errorf("new delivery = %+v, want pending, no attempts, due now", a)
	}
	if got, want := e.pending(), len(want)+1; got != want {
		t.Errorf("PendingDeliveries = %d, want %d", got, want)
	}
	// Deleting an endpoint removes its deliveries with it.
	if err := e.ws.DeleteWebhook(e.ctx, all); err != nil {
		t.Fatal(err)
	}
	if got := e.pending(); got != 1 {
		t.Errorf("PendingDeliveries after delete = %d, want 1", got)
	}
}

func testRuleEventsRollBack(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventTypes()...)
	u := e.user("ada")
	_, err := e.ws.CreateUser(e.ctx, newUser("ADA")) // conflict: rolls back
	WantCode(t, err, identity.CodeConflict)
	_, err = e.ws.UpdateUser(e.ctx, u.ID, identity.UserUpdate{Email: "bad", FullName: "x"})
	WantCode(t, err, identity.CodeInvalid)
	WantCode(t, e.ws.RemoveRole(e.ctx, u.ID, 9), identity.CodeNotFound)
	if diff := cmp.Diff([]string{"user.created"}, eventTypes(e.events(hook))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func testRuleLoginFailedEvents(t *testing.T, e *env) {
	u := e.user("ada")
	imported, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "nopass", Email: "np@example.com", FullName: "N"}})
	if err != nil {
		t.Fatal(err)
	}
	nopass := imported[0]
	// Nobody listens: a refused login writes nothing.
	_, err = e.ws.Authenticate(e.ctx, "ada", "wrong password")
	WantCode(t, err, identity.CodeUnauthenticated)
	if n := e.pending(); n != 0 {
		t.Fatalf("%d deliveries queued with no subscriber", n)
	}

	hook := e.endpoint(identity.EventLoginFailed)
	off := e.user("off")
	if err := e.ws.DisableUser(e.ctx, off.ID); err != nil {
		t.Fatal(err)
	}
	attempts := []struct {
		login, password string
		ok              bool
	}{
		{"ghost", "whatever-pass", false},
		{"ADA", "wrong password", false},
		{"off", "s3cret-passphrase", false},
		{"nopass", "anything-at-all", false},
		{"ada", "s3cret-passphrase", true}, // no event
		{strings.Repeat("é", 300), "x", false},
	}
	for _, a := range attempts {
		got, err := e.ws.Authenticate(e.ctx, a.login, a.password)
		if a.ok {
			if err != nil || got.ID != u.ID {
				t.Fatalf("Authenticate(%q) = %+v, %v; want user %d", a.login, got, err, u.ID)
			}
			continue
		}
		WantCode(t, err, identity.CodeUnauthenticated)
	}
	var got []string
	for _, ev := range e.events(hook) {
		got = append(got, string(ev.Data))
	}
	want := []string{
		`{"login":"ghost","reason":"unknown_user"}`,
		`{"login":"ADA","reason":"wrong_password","userId":` + itoa(u.ID) + `}`,
		`{"login":"off","reason":"disabled","userId":` + itoa(off.ID) + `}`,
		`{"login":"nopass","reason":"no_password","userId":` + itoa(nopass.ID) + `}`,
		`{"login":"` + strings.Repeat("é", identity.MaxUsernameLength) + `","reason":"unknown_user"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("login.failed data (-want +got):\n%s", diff)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func testRuleSessions(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventSessionRevoked)
	u := e.user("ada")
	created, err := e.ws.Login(e.ctx, "ada", "s3cret-passphrase")
	if err != nil {
		t.Fatal(err)
	}
	gotUser, s, token := created.User, created.Session, created.Secret
	if gotUser.ID != u.ID || !strings.HasPrefix(token, "ids_"+s.ID+"_") {
		t.Fatalf("Login = %+v, token %q", gotUser, token)
	}
	now := testNow.Truncate(time.Microsecond)
	want := identity.Session{ID: s.ID, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(identity.DefaultSessionLifetime), LastSeenAt: now,
		AMR: []string{"pwd"}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Login session (-want +got):\n%s", diff)
	}
	_, err = e.ws.Login(e.ctx, "ada", "wrong password")
	WantCode(t, err, identity.CodeUnauthenticated)

	// Verify; LastSeenAt moves at most once a minute.
	e.clock.Advance(30 * time.Second)
	verified, err := e.ws.VerifySession(e.ctx, token)
	vs, vu := verified.Session, verified.User
	if err != nil || vu.ID != u.ID || !vs.LastSeenAt.Equal(now) {
		t.Fatalf("VerifySession = %+v, %+v, %v", vs, vu, err)
	}
	e.clock.Advance(2 * time.Minute)
	if verified, err = e.ws.VerifySession(e.ctx, token); err != nil || !verified.Session.LastSeenAt.Equal(now.Add(150*time.Second)) {
		t.Errorf("VerifySession after 2.5 min: LastSeenAt %v, %v", verified.Session.LastSeenAt, err)
	}
	stored, err := e.ws.GetSession(e.ctx, s.ID)
	if err != nil || !stored.LastSeenAt.Equal(now.Add(150*time.Second)) {
		t.Errorf("GetSession = %+v, %v; want LastSeenAt stored", stored, err)
	}
	flipped := token[:len(token)-1] + "A"
	if strings.HasSuffix(token, "A") {
		flipped = token[:len(token)-1] + "B"
	}
	for _, bad := range []string{"", "ids_", flipped, "idk_" + token[4:]} {
		_, err := e.ws.VerifySession(e.ctx, bad)
		WantCode(t, err, identity.CodeUnauthenticated)
	}

	// Expiry: an expired session is refused; revoking it emits nothing.
	e.clock.Advance(identity.DefaultSessionLifetime)
	_, err = e.ws.VerifySession(e.ctx, token)
	WantCode(t, err, identity.CodeUnauthenticated)
	if err := e.ws.RevokeSession(e.ctx, s.ID); err != nil {
		t.Fatal(err)
	}

	// Revocation: immediate, emitted once.
	created, err = e.ws.Login(e.ctx, "ada", "s3cret-passphrase")
	if err != nil {
		t.Fatal(err)
	}
	s2, token2 := created.Session, created.Secret
	for range 2 {
		if err := e.ws.RevokeSession(e.ctx, s2.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.ws.VerifySession(e.ctx, token2)
	WantCode(t, err, identity.CodeUnauthenticated)
	var data []string
	for _, ev := range e.events(hook) {
		data = append(data, string(ev.Data))
	}
	if diff := cmp.Diff([]string{`{"sessionId":"` + s2.ID + `","userId":1,"reason":"revoked"}`}, data); diff != "" {
		t.Errorf("session.revoked events (-want +got):\n%s", diff)
	}
	WantCode(t, e.ws.RevokeSession(e.ctx, "0000000000000000"), identity.CodeNotFound)
	sessions, err := listItems(e.ws.ListSessions(e.ctx, u.ID, nil))
	if err != nil || len(sessions) != 2 || sessions[0].ID != s.ID || sessions[1].RevokedAt == nil {
		t.Errorf("Sessions = %+v, %v", sessions, err)
	}
	_, err = listItems(e.ws.ListSessions(e.ctx, 999, nil))
	WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.CreateSession(e.ctx, 999, nil)
	WantCode(t, err, identity.CodeNotFound)
}

func testRuleDisableRevokesSessions(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventSessionRevoked, identity.EventUserDisabled)
	u := e.user("ada")
	var tokens []string
	var ids []string
	for range 3 {
		created, err := e.ws.CreateSession(e.ctx, u.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, token := created.Session, created.Secret
		tokens, ids = append(tokens, token), append(ids, s.ID)
	}
	if err := e.ws.RevokeSession(e.ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.DisableUser(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	for _, token := range tokens {
		_, err := e.ws.VerifySession(e.ctx, token)
		WantCode(t, err, identity.CodeUnauthenticated)
	}
	var got []string
	for _, ev := range e.events(hook) {
		got = append(got, ev.Type+" "+string(ev.Data))
	}
	want := []string{
		`session.revoked {"sessionId":"` + ids[0] + `","userId":1,"reason":"revoked"}`,
		`session.revoked {"sessionId":"` + ids[1] + `","userId":1,"reason":"user_disabled"}`,
		`session.revoked {"sessionId":"` + ids[2] + `","userId":1,"reason":"user_disabled"}`,
	}
	if len(got) != 4 || !strings.HasPrefix(got[3], "user.disabled ") {
		t.Fatalf("events = %v, want three session.revoked then user.disabled", got)
	}
	if diff := cmp.Diff(want, got[:3], cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("session.revoked events (-want +got):\n%s", diff)
	}
	// The history is kept; re-enabling does not revive sessions.
	if err := e.ws.EnableUser(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	sessions, err := listItems(e.ws.ListSessions(e.ctx, u.ID, nil))
	if err != nil || len(sessions) != 3 {
		t.Fatalf("Sessions = %+v, %v", sessions, err)
	}
	for _, s := range sessions {
		if s.RevokedAt == nil {
			t.Errorf("session %s active after disable", s.ID)
		}
	}
	_, err = e.ws.VerifySession(e.ctx, tokens[2])
	WantCode(t, err, identity.CodeUnauthenticated)
	if err := e.ws.DisableUser(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.CreateSession(e.ctx, u.ID, nil)
	WantCode(t, err, identity.CodeForbidden)
}
