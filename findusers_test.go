package identity_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/memstore"
)

// findStores are the stores TestFindUsers runs over: the in-memory one
// and a bbolt file, whose index is built by its own code.
var findStores = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"memstore", func(t *testing.T) store.Store { return memstore.New() }},
	{"boltstore", func(t *testing.T) store.Store {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "identity.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// TestFindUsers: FindUsers returns the users whose attribute has exactly
// the value, in id order, page by page with the number of them in all,
// disabled users included; it follows changed and deleted attributes and
// deleted users; it refuses a key, value or page that no attribute or
// listing can have, listing every problem.
func TestFindUsers(t *testing.T) {
	for _, st := range findStores {
		t.Run(st.name, func(t *testing.T) {
			s := st.open(t)
			t.Cleanup(func() { s.Close() })
			clock := newFakeClock()
			svc, err := identity.New(s, &identity.Options{Now: clock.Now, PasswordHashing: &cheapArgon2})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ws, err := svc.CreateWorkspace(ctx, "acme", nil)
			if err != nil {
				t.Fatal(err)
			}
			other, err := svc.CreateWorkspace(ctx, "globex", nil)
			if err != nil {
				t.Fatal(err)
			}
			// Users 1-6 of acme and their attributes.
			attrs := []map[string]string{
				{"dept": "sales", "floor": "3"},
				{"dept": "Sales", "floor": ""},
				{"dept": "sales"},
				{"dept": "sales "},
				{"dept": "sales", "部署": "営業"},
				{"dept": "sales-east"},
			}
			for i, kv := range attrs {
				u, err := ws.CreateUser(ctx, newUserNamed(fmt.Sprint("user", i+1)))
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range kv {
					if _, err := ws.SetAttribute(ctx, u.ID, k, v, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := ws.DisableUser(ctx, 5); err != nil {
				t.Fatal(err)
			}
			globexUser, err := other.CreateUser(ctx, newUserNamed("someone"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.SetAttribute(ctx, globexUser.ID, "dept", "sales", nil); err != nil {
				t.Fatal(err)
			}
			if globexUser, err = other.GetUser(ctx, globexUser.ID); err != nil { // at the attribute's version
				t.Fatal(err)
			}

			type result struct {
				IDs                  []int64
				Total, Offset, Limit int
				Err                  *identity.Error
			}
			find := func(key, value string, page *identity.Page) result {
				l, err := ws.ListUsersByAttribute(ctx, key, value, page)
				r := result{Total: l.Total, Offset: l.Offset, Limit: l.Limit}
				if err != nil {
					if !errors.As(err, &r.Err) {
						t.Fatalf("FindUsers(%q, %q): error %v is not an *identity.Error", key, value, err)
					}
					r.Err.Message = ""
					for i := range r.Err.Fields {
						r.Err.Fields[i].Message = ""
					}
					return r
				}
				if l.Items == nil {
					t.Errorf("FindUsers(%q, %q): Items is nil", key, value)
				}
				for _, u := range l.Items {
					r.IDs = append(r.IDs, u.ID)
				}
				return r
			}
			invalid := func(fields ...identity.FieldError) *identity.Error {
				return &identity.Error{Code: identity.CodeInvalid, Fields: fields}
			}
			fe := func(field, rule string) identity.FieldError { return identity.FieldError{Field: field, Rule: rule} }

			type findCase struct {
				name       string
				key, value string
				page       *identity.Page
				want       result
			}
			check := func(step string, cases []findCase) {
				t.Helper()
				for _, c := range cases {
					if diff := cmp.Diff(c.want, find(c.key, c.value, c.page)); diff != "" {
						t.Errorf("%s: %s: FindUsers(%q, %q) mismatch (-want +got):\n%s", step, c.name, c.key, c.value, diff)
					}
				}
			}
			check("created", []findCase{
				{"the first page by default", "dept", "sales", nil, result{IDs: []int64{1, 3, 5}, Total: 3, Limit: 20}},
				{"a page", "dept", "sales", &identity.Page{Offset: 1, Limit: 1}, result{IDs: []int64{3}, Total: 3, Offset: 1, Limit: 1}},
				{"the last page", "dept", "sales", &identity.Page{Offset: 2, Limit: 100}, result{IDs: []int64{5}, Total: 3, Offset: 2, Limit: 100}},
				{"past the end", "dept", "sales", &identity.Page{Offset: 3, Limit: 5}, result{Total: 3, Offset: 3, Limit: 5}},
				{"case counts", "dept", "Sales", nil, result{IDs: []int64{2}, Total: 1, Limit: 20}},
				{"spaces count", "dept", "sales ", nil, result{IDs: []int64{4}, Total: 1, Limit: 20}},
				{"not a prefix", "dept", "sale", nil, result{Total: 0, Limit: 20}},
				{"the longer value", "dept", "sales-east", nil, result{IDs: []int64{6}, Total: 1, Limit: 20}},
				{"the empty value", "floor", "", nil, result{IDs: []int64{2}, Total: 1, Limit: 20}},
				{"keys are not folded", "DEPT", "sales", nil, result{Total: 0, Limit: 20}},
				{"any script", "部署", "営業", nil, result{IDs: []int64{5}, Total: 1, Limit: 20}},
				{"no such key", "team", "sales", nil, result{Total: 0, Limit: 20}},
				{"a value of 1024 characters", "dept", strings.Repeat("ü", 1024), nil, result{Total: 0, Limit: 20}},
				{"a key of 64 characters", strings.Repeat("k", 64), "", nil, result{Total: 0, Limit: 20}},

				{"empty key", "", "sales", nil, result{Err: invalid(fe("key", identity.RuleRequired))}},
				{"key of 65 characters", strings.Repeat("k", 65), "sales", nil, result{Err: invalid(fe("key", identity.RuleMaxLength))}},
				{"key with NUL", "de\x00pt", "sales", nil, result{Err: invalid(fe("key", identity.RuleControlCharacter))}},
				{"key with a bidirectional control", "de\u202ept", "sales", nil, result{Err: invalid(fe("key", identity.RuleControlCharacter))}},
				{"key not UTF-8", "de\xffpt", "sales", nil, result{Err: invalid(fe("key", identity.RuleUTF8))}},
				{"value of 1025 characters", "dept", strings.Repeat("v", 1025), nil, result{Err: invalid(fe("value", identity.RuleMaxLength))}},
				{"value with NUL", "dept", "sa\x00les", nil, result{Err: invalid(fe("value", identity.RuleControlCharacter))}},
				{"value not UTF-8", "dept", "\xff", nil, result{Err: invalid(fe("value", identity.RuleUTF8))}},
				{"page out of range", "dept", "sales", &identity.Page{Offset: -1, Limit: 101},
					result{Err: invalid(fe("offset", identity.RuleRange), fe("limit", identity.RuleRange))}},
				{"every problem at once", "", "\x00", &identity.Page{Offset: 0, Limit: 0},
					result{Err: invalid(fe("key", identity.RuleRequired), fe("value", identity.RuleControlCharacter), fe("limit", identity.RuleRange))}},
			})

			// Changes: a value replaced, an attribute deleted, a user
			// deleted for good.
			if _, err := ws.SetAttribute(ctx, 2, "dept", "sales", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.DeleteAttribute(ctx, 3, "dept", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.SetAttribute(ctx, 1, "dept", "ops", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.DeleteUserPermanently(ctx, 5); err != nil {
				t.Fatal(err)
			}
			check("changed", []findCase{
				{"moved in and out", "dept", "sales", nil, result{IDs: []int64{2}, Total: 1, Limit: 20}},
				{"the new value", "dept", "ops", nil, result{IDs: []int64{1}, Total: 1, Limit: 20}},
				{"the old value left", "dept", "Sales", nil, result{Total: 0, Limit: 20}},
				{"the deleted user's other attribute", "部署", "営業", nil, result{Total: 0, Limit: 20}},
			})

			l, err := other.ListUsersByAttribute(ctx, "dept", "sales", nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]identity.User{globexUser}, l.Items); diff != "" || l.Total != 1 {
				t.Errorf("FindUsers in globex: total %d, want 1; users (-want +got):\n%s", l.Total, diff)
			}

			if _, err := svc.DeleteWorkspace(ctx, "globex"); err != nil {
				t.Fatal(err)
			}
			if _, err := other.ListUsersByAttribute(ctx, "dept", "sales", nil); !errors.Is(err, identity.ErrNotFound) {
				t.Errorf("FindUsers in a deleted workspace: error %v, want ErrNotFound", err)
			}
		})
	}
}

func ExampleWorkspace_ListUsersByAttribute() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	for _, u := range []struct{ name, dept string }{{"ada", "research"}, {"bob", "sales"}, {"carol", "research"}} {
		created, err := ws.CreateUser(ctx, identity.NewUser{
			Username: u.name, Email: u.name + "@example.com", FullName: u.name, Password: "correct horse battery",
		})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := ws.SetAttribute(ctx, created.ID, "department", u.dept, nil); err != nil {
			log.Fatal(err)
		}
	}
	list, err := ws.ListUsersByAttribute(ctx, "department", "research", &identity.Page{Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range list.Items {
		fmt.Println(u.ID, u.Username)
	}
	fmt.Println("total", list.Total)

	_, err = ws.ListUsersByAttribute(ctx, "", "research", nil)
	fmt.Println(errors.Is(err, identity.ErrInvalid))
	// Output:
	// 1 ada
	// 3 carol
	// total 2
	// true
}
