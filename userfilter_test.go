package identity_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// scanResult is a call of ListUsersFiltered with the users as usernames.
type scanResult struct {
	Users      []string
	Examined   int
	Total      int
	HasMore    bool
	NextCursor string
}

func (e *testEnv) scan(filter identity.UserFilter, page *identity.ScanOptions) scanResult {
	e.t.Helper()
	got, err := e.ws.ListUsersFiltered(e.ctx, filter, page)
	if err != nil {
		e.t.Fatalf("ListUsersFiltered(%+v): %v", filter, err)
	}
	out := scanResult{Examined: got.Examined, Total: got.Total, HasMore: got.HasMore, NextCursor: got.NextCursor}
	for _, u := range got.Items {
		out.Users = append(out.Users, u.Username)
	}
	return out
}

// Each condition keeps the users in that state, together they all must
// hold, and the search narrows the scan to its matches.
func TestListUsersFiltered(t *testing.T) {
	e := newLockoutEnv(t) // 5 failures lock for 10 minutes
	_, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{
		{Username: "bea", Email: "bea@example.com", FullName: "Bea", Disabled: true},
		{Username: "cy", Email: "cy@example.com", FullName: "Cy", EmailVerified: true},
		{Username: "dee", Email: "dee@example.com", FullName: "Dee", MFAEnabled: true},
		{Username: "eve", Email: "eve@example.com", FullName: "Eve"},
		{Username: "fay", Email: "fay@example.com", FullName: "Fay", Disabled: true, EmailVerified: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ws.SetPassword(e.ctx, 5, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	e.fail("eve", 5)
	for _, c := range []struct {
		name   string
		filter identity.UserFilter
		want   scanResult
	}{
		{"no condition", identity.UserFilter{}, scanResult{Users: []string{"ada", "bea", "cy", "dee", "eve", "fay"}, Examined: 6, Total: 6}},
		{"disabled", identity.UserFilter{Disabled: true}, scanResult{Users: []string{"bea", "fay"}, Examined: 6, Total: 6}},
		{"locked", identity.UserFilter{Locked: true}, scanResult{Users: []string{"eve"}, Examined: 6, Total: 6}},
		{"second factor", identity.UserFilter{MFAEnrolled: true}, scanResult{Users: []string{"dee"}, Examined: 6, Total: 6}},
		{"email unverified", identity.UserFilter{EmailUnverified: true}, scanResult{Users: []string{"ada", "bea", "dee", "eve"}, Examined: 6, Total: 6}},
		{"disabled and unverified", identity.UserFilter{Disabled: true, EmailUnverified: true}, scanResult{Users: []string{"bea"}, Examined: 6, Total: 6}},
		{"locked and unverified", identity.UserFilter{Locked: true, EmailUnverified: true}, scanResult{Users: []string{"eve"}, Examined: 6, Total: 6}},
		{"locked and disabled", identity.UserFilter{Locked: true, Disabled: true}, scanResult{Examined: 6, Total: 6}},
		{"search", identity.UserFilter{Search: "E"}, scanResult{Users: []string{"eve"}, Examined: 1, Total: 1}},
		{"search by email domain does not match", identity.UserFilter{Search: "example"}, scanResult{Total: 0}},
		{"search and disabled", identity.UserFilter{Search: "f", Disabled: true}, scanResult{Users: []string{"fay"}, Examined: 1, Total: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, e.scan(c.filter, nil)); diff != "" {
				t.Errorf("ListUsersFiltered (-want +got):\n%s", diff)
			}
		})
	}
	// Pages of one: the cursor is the position after the last user
	// examined; the last page examines what is left.
	pages := []scanResult{
		{Users: []string{"bea"}, Examined: 2, Total: 6, HasMore: true, NextCursor: "2"},
		{Users: []string{"fay"}, Examined: 4, Total: 6},
	}
	page := &identity.ScanOptions{Limit: 1}
	for i, want := range pages {
		got := e.scan(identity.UserFilter{Disabled: true}, page)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("page %d (-want +got):\n%s", i+1, diff)
		}
		page.Cursor = got.NextCursor
	}
	if diff := cmp.Diff(scanResult{Total: 6}, e.scan(identity.UserFilter{}, &identity.ScanOptions{Cursor: "6"})); diff != "" {
		t.Errorf("cursor at the end (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(scanResult{Users: []string{"bea", "fay"}, Examined: 6, Total: 6}, e.scan(identity.UserFilter{Disabled: true}, &identity.ScanOptions{Cursor: "0"})); diff != "" {
		t.Errorf("cursor 0, the start (-want +got):\n%s", diff)
	}
	// With lockout off, nobody is locked.
	setLockout(t, e.testEnv, identity.LockoutPolicy{Disabled: true})
	if diff := cmp.Diff(scanResult{Examined: 6, Total: 6}, e.scan(identity.UserFilter{Locked: true}, nil)); diff != "" {
		t.Errorf("locked with lockout off (-want +got):\n%s", diff)
	}
}

// One call examines at most 1,000 users: the one disabled user among
// 2,500 is found by the third call; the first two are empty and go on.
func TestListUsersFilteredBounded(t *testing.T) {
	e := newTestEnv(t, nil)
	for from := 2; from <= 2500; from += 500 {
		batch := make([]identity.ImportedUser, 0, 500)
		for i := from; i < from+500 && i <= 2500; i++ {
			name := fmt.Sprintf("user%d", i)
			batch = append(batch, identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: name, Disabled: i == 2500})
		}
		if _, err := e.ws.ImportUsers(e.ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	calls := []scanResult{
		{Examined: 1000, Total: 2500, HasMore: true, NextCursor: "1000"},
		{Examined: 1000, Total: 2500, HasMore: true, NextCursor: "2000"},
		{Users: []string{"user2500"}, Examined: 500, Total: 2500},
	}
	page := &identity.ScanOptions{Limit: identity.MaxPageLimit}
	for i, want := range calls {
		got := e.scan(identity.UserFilter{Disabled: true}, page)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i+1, diff)
		}
		page.Cursor = got.NextCursor
	}
	// A page filled early stops there.
	if diff := cmp.Diff(scanResult{Users: []string{"ada", "user2", "user3"}, Examined: 3, Total: 2500, HasMore: true, NextCursor: "3"},
		e.scan(identity.UserFilter{}, &identity.ScanOptions{Limit: 3})); diff != "" {
		t.Errorf("a page of 3 (-want +got):\n%s", diff)
	}
}

// An invalid page or search is CodeInvalid naming each field at fault.
func TestListUsersFilteredInvalid(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, c := range []struct {
		name   string
		filter identity.UserFilter
		page   identity.ScanOptions
		want   []identity.FieldError
	}{
		{"limit and cursor", identity.UserFilter{}, identity.ScanOptions{Limit: -1, Cursor: "-1"}, []identity.FieldError{
			{Field: "limit", Rule: identity.RuleRange, Message: "must be between 1 and 100"},
			{Field: "cursor", Rule: identity.RuleFormat, Message: "must be the nextCursor of a page"},
		}},
		{"a cursor with a sign", identity.UserFilter{}, identity.ScanOptions{Cursor: "+1"}, []identity.FieldError{
			{Field: "cursor", Rule: identity.RuleFormat, Message: "must be the nextCursor of a page"},
		}},
		{"a cursor with a leading zero", identity.UserFilter{}, identity.ScanOptions{Cursor: "01"}, []identity.FieldError{
			{Field: "cursor", Rule: identity.RuleFormat, Message: "must be the nextCursor of a page"},
		}},
		{"search", identity.UserFilter{Search: "\xff"}, identity.ScanOptions{Limit: 101}, []identity.FieldError{
			{Field: "limit", Rule: identity.RuleRange, Message: "must be between 1 and 100"},
			{Field: "search", Rule: identity.RuleUTF8, Message: "must be valid UTF-8"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.ws.ListUsersFiltered(e.ctx, c.filter, &c.page)
			if identity.ErrorCode(err) != identity.CodeInvalid {
				t.Fatalf("ListUsersFiltered = %v, want CodeInvalid", err)
			}
			if diff := cmp.Diff(c.want, fieldsOf(err)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}
