package identitytest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
)

// testRuleFindUsers checks lookups by attribute value through imports,
// changed and deleted attributes, permanent deletions and concurrent
// writers, and the validation of the lookup.
func testRuleFindUsers(t *testing.T, e *env) {
	find := func(key, value string, page *identity.Page) ([]int64, int) {
		t.Helper()
		list, err := e.ws.ListUsersByAttribute(e.ctx, key, value, page)
		if err != nil {
			t.Fatalf("FindUsers(%q, %q): %v", key, value, err)
		}
		return idsOf(list.Items), list.Total
	}
	check := func(step, key, value string, want []int64) {
		t.Helper()
		ids, total := find(key, value, &identity.Page{Limit: 100})
		if diff := cmp.Diff(want, ids, cmpopts.EquateEmpty()); diff != "" || total != len(want) {
			t.Errorf("%s: FindUsers(%q, %q) total %d, want %d; ids (-want +got):\n%s", step, key, value, total, len(want), diff)
		}
	}
	// Ids 1-30: dept "sales" for every third (1, 4, ..., 28), "ops" for
	// the rest; user 2 has "Sales", user 3 "sales " (case and space count).
	batch := make([]identity.ImportedUser, 30)
	for i := range batch {
		dept := "ops"
		switch {
		case i%3 == 0:
			dept = "sales"
		case i == 1:
			dept = "Sales"
		case i == 2:
			dept = "sales "
		}
		name := fmt.Sprintf("member%02d", i+1)
		batch[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "Member",
			Attributes: map[string]string{"dept": dept, "site": "hq"}}
	}
	if _, err := e.ws.ImportUsers(e.ctx, batch); err != nil {
		t.Fatal(err)
	}
	check("imported", "dept", "sales", []int64{1, 4, 7, 10, 13, 16, 19, 22, 25, 28})
	check("imported", "dept", "Sales", []int64{2})
	check("imported", "dept", "sales ", []int64{3})
	check("imported", "dept", "sale", nil)
	check("imported", "site", "hq", func() []int64 {
		var all []int64
		for id := int64(1); id <= 30; id++ {
			all = append(all, id)
		}
		return all
	}())
	if ids, total := find("dept", "sales", &identity.Page{Offset: 8, Limit: 5}); total != 10 || !cmp.Equal(ids, []int64{25, 28}) {
		t.Errorf("offset 8: ids %v total %d, want [25 28] and 10", ids, total)
	}

	// A changed value moves the user; a deleted attribute and a deleted
	// user leave.
	for _, step := range []error{
		err2(e.ws.SetAttribute(e.ctx, 4, "dept", "ops", nil)),
		err2(e.ws.SetAttribute(e.ctx, 5, "dept", "sales", nil)),
		err2(e.ws.DeleteAttribute(e.ctx, 7, "dept", nil)),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	if _, err := e.ws.DeleteUserPermanently(e.ctx, 10); err != nil {
		t.Fatal(err)
	}
	check("changed", "dept", "sales", []int64{1, 5, 13, 16, 19, 22, 25, 28})

	// Eight writers set "on" on four users each at once.
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := range 8 {
		wg.Go(func() {
			for i := range 4 {
				if _, err := e.ws.SetAttribute(e.ctx, int64(w*4+i+1), "shift", "on", nil); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if identity.ErrorCode(err) != identity.CodeNotFound { // users 10 (deleted), 31 and 32
			t.Fatal(err)
		}
	}
	if _, total := find("shift", "on", nil); total != 29 {
		t.Errorf("after concurrent writers: total %d, want 29", total)
	}

	_, err := e.ws.ListUsersByAttribute(e.ctx, "", "x", &identity.Page{Limit: 0, Offset: -1})
	WantCode(t, err, identity.CodeInvalid)
	WantFields(t, err, []identity.FieldError{fe("key", identity.RuleRequired), fe("offset", identity.RuleRange), fe("limit", identity.RuleRange)})
}
