package identity_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
)

// fail makes n failed sign-ins of the user with a wrong password.
func (e *testEnv) fail(username string, n int) {
	e.t.Helper()
	for range n {
		if _, err := e.ws.Authenticate(e.ctx, username, "wrong password"); err == nil {
			e.t.Fatalf("Authenticate(%s, wrong password) succeeded", username)
		}
	}
}

// The state follows the count, the lock, its end and the policy: a lock
// that ended reads as none with nothing counted, and lockout off reads as
// the zero state whatever is stored.
func TestGetLockState(t *testing.T) {
	e := newLockoutEnv(t)
	t0 := e.clock.Now()
	steps := []struct {
		name string
		do   func()
		want identity.LockState
	}{
		{"fresh", func() {}, identity.LockState{Threshold: 5}},
		{"two failures", func() { e.fail("ada", 2) }, identity.LockState{Failures: 2, Threshold: 5}},
		{"locked by the fifth", func() { e.fail("ada", 3) }, identity.LockState{Locked: true, LockedUntil: t0.Add(10 * time.Minute), Failures: 5, Threshold: 5}},
		{"a second before the end", func() { e.clock.Advance(10*time.Minute - time.Second) }, identity.LockState{Locked: true, LockedUntil: t0.Add(10 * time.Minute), Failures: 5, Threshold: 5}},
		{"the lock's end", func() { e.clock.Advance(time.Second) }, identity.LockState{Threshold: 5}},
		{"one failure after the lock", func() { e.fail("ada", 1) }, identity.LockState{Failures: 1, Threshold: 5}},
		{"lockout off", func() {
			setLockout(t, e.testEnv, identity.LockoutPolicy{Disabled: true})
		}, identity.LockState{}},
		{"threshold 3 counts the stored failure", func() {
			setLockout(t, e.testEnv, identity.LockoutPolicy{Threshold: 3})
		}, identity.LockState{Failures: 1, Threshold: 3}},
		{"unlocked", func() {
			if err := e.ws.UnlockUser(e.ctx, e.ada.ID); err != nil {
				t.Fatal(err)
			}
		}, identity.LockState{Threshold: 3}},
	}
	for _, s := range steps {
		s.do()
		got, err := e.ws.GetLockState(e.ctx, e.ada.ID)
		if err != nil {
			t.Fatalf("%s: GetLockState: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: GetLockState (-want +got):\n%s", s.name, diff)
		}
	}
	for _, id := range []int64{0, -1, 99} {
		if _, err := e.ws.GetLockState(e.ctx, id); identity.ErrorCode(err) != identity.CodeNotFound {
			t.Errorf("GetLockState(%d) = %v, want CodeNotFound", id, err)
		}
	}
}

// lockedPage is a page of ListLockedUsers as usernames and times.
type lockedPage struct {
	Users      []string
	Until      []time.Time
	HasMore    bool
	NextCursor bool
}

func (e *testEnv) lockedPage(page *identity.ScanOptions) (lockedPage, string) {
	e.t.Helper()
	got, err := e.ws.ListLockedUsers(e.ctx, page)
	if err != nil {
		e.t.Fatalf("ListLockedUsers: %v", err)
	}
	out := lockedPage{HasMore: got.HasMore, NextCursor: got.NextCursor != ""}
	for _, lu := range got.Items {
		out.Users = append(out.Users, lu.User.Username)
		out.Until = append(out.Until, lu.LockedUntil)
	}
	return out, got.NextCursor
}

// The locked users are read from the account.locked records: the latest
// lock first, a user locked twice once (by the lock in force), neither a
// user unlocked since nor a lock that ended; pages go on by cursor.
func TestListLockedUsers(t *testing.T) {
	e := newLockoutEnv(t)
	for _, name := range []string{"bea", "cy"} {
		e.user(name)
	}
	t0 := e.clock.Now()
	e.fail("ada", 5) // until t0+10m, ended by t0+11m
	e.clock.Advance(5 * time.Minute)
	e.fail("bea", 5) // unlocked below
	e.clock.Advance(time.Minute)
	e.fail("cy", 5) // until t0+16m
	if err := e.ws.UnlockUser(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5 * time.Minute)
	e.fail("ada", 5) // the lock ended: locked again, until t0+21m

	got, _ := e.lockedPage(nil)
	want := lockedPage{Users: []string{"ada", "cy"}, Until: []time.Time{t0.Add(21 * time.Minute), t0.Add(16 * time.Minute)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListLockedUsers(nil) (-want +got):\n%s", diff)
	}
	lu, err := e.ws.ListLockedUsers(e.ctx, &identity.ScanOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantFirst := []identity.LockedUser{{LockedAt: t0.Add(11 * time.Minute), LockedUntil: t0.Add(21 * time.Minute)}}
	if diff := cmp.Diff(wantFirst, lu.Items, cmpopts.IgnoreFields(identity.LockedUser{}, "User")); diff != "" || lu.Items[0].User.ID != e.ada.ID {
		t.Errorf("first page of 1 (-want +got):\n%s; user %+v", diff, lu.Items[0].User)
	}

	// Pages of one: ada, then cy, then the two records left (bea's,
	// unlocked, and ada's first, ended) give an empty last page.
	pages := []lockedPage{
		{Users: []string{"ada"}, Until: []time.Time{t0.Add(21 * time.Minute)}, HasMore: true, NextCursor: true},
		{Users: []string{"cy"}, Until: []time.Time{t0.Add(16 * time.Minute)}, HasMore: true, NextCursor: true},
		{},
	}
	page := &identity.ScanOptions{Limit: 1}
	for i, want := range pages {
		got, next := e.lockedPage(page)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("page %d (-want +got):\n%s", i+1, diff)
		}
		page.Cursor = next
	}

	// cy's lock ends; ada's goes on.
	e.clock.Advance(5 * time.Minute)
	got, _ = e.lockedPage(nil)
	if diff := cmp.Diff(lockedPage{Users: []string{"ada"}, Until: []time.Time{t0.Add(21 * time.Minute)}}, got); diff != "" {
		t.Errorf("after cy's lock ended (-want +got):\n%s", diff)
	}
	// With lockout off nobody is locked.
	setLockout(t, e.testEnv, identity.LockoutPolicy{Disabled: true})
	if got, _ = e.lockedPage(nil); !cmp.Equal(lockedPage{}, got) {
		t.Errorf("lockout off: %+v, want nothing", got)
	}
}

// One call examines at most 1,000 account.locked records: behind 1,500
// newer records of locks without a recorded end (nothing to read), the
// first page is empty and goes on, the second finds ada's lock and ends,
// since the scan never reads a record older than MaxLockoutDuration (600
// of them here).
func TestListLockedUsersBounded(t *testing.T) {
	e := newLockoutEnv(t)
	now := e.clock.Now()
	e.putAuditRecords(identity.AuditAccountLocked, identity.OutcomeSuccess, now.Add(-identity.MaxLockoutDuration-time.Hour), 600)
	e.fail("ada", 5)
	e.putAuditRecords(identity.AuditAccountLocked, identity.OutcomeSuccess, now.Add(time.Second), 1500)
	got, next := e.lockedPage(nil)
	if diff := cmp.Diff(lockedPage{HasMore: true, NextCursor: true}, got); diff != "" {
		t.Errorf("first call (-want +got):\n%s", diff)
	}
	got, _ = e.lockedPage(&identity.ScanOptions{Cursor: next})
	if diff := cmp.Diff(lockedPage{Users: []string{"ada"}, Until: []time.Time{now.Add(10 * time.Minute)}}, got); diff != "" {
		t.Errorf("second call (-want +got):\n%s", diff)
	}
}

// An invalid page is CodeInvalid naming each field at fault.
func TestListLockedUsersInvalid(t *testing.T) {
	e := newLockoutEnv(t)
	_, err := e.ws.ListLockedUsers(e.ctx, &identity.ScanOptions{Cursor: "nope", Limit: identity.MaxPageLimit + 1})
	want := []identity.FieldError{
		{Field: "limit", Rule: identity.RuleRange, Message: "must be between 1 and 100"},
		{Field: "cursor", Rule: identity.RuleFormat, Message: "must be the nextCursor of a page"},
	}
	if identity.ErrorCode(err) != identity.CodeInvalid {
		t.Fatalf("ListLockedUsers = %v, want CodeInvalid", err)
	}
	if diff := cmp.Diff(want, fieldsOf(err)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
