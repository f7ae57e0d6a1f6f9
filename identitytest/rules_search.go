package identitytest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/identitylib/identity"
)

// testRuleSearchTotals checks search totals by short and long prefixes
// through imports, a failed import, updates that change the email and
// full name, permanent deletions and concurrent creations: a store may
// keep counts per prefix, which every path that writes users must keep
// exact.
func testRuleSearchTotals(t *testing.T, e *env) {
	check := func(step string, want map[string]int) {
		t.Helper()
		for prefix, total := range want {
			list, err := e.ws.ListUsers(e.ctx, prefix, &identity.Page{Limit: 1})
			if err != nil {
				t.Fatalf("%s: ListUsers(%q): %v", step, prefix, err)
			}
			if list.Total != total {
				t.Errorf("%s: ListUsers(%q) total = %d, want %d", step, prefix, list.Total, total)
			}
		}
	}
	// 120 users: sales000-059 and ops060-119, every fourth named Kim Lee.
	batch := make([]identity.ImportedUser, 120)
	for i := range batch {
		name := fmt.Sprintf("sales%03d", i)
		if i >= 60 {
			name = fmt.Sprintf("ops%03d", i)
		}
		full := "Pat Doe"
		if i%4 == 0 {
			full = "Kim Lee"
		}
		batch[i] = identity.ImportedUser{Username: name, Email: name + "@corp.example", FullName: full}
	}
	imported, err := e.ws.ImportUsers(e.ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	afterImport := map[string]int{
		"s": 60, "sa": 60, "sal": 60, "SALES05": 10, "sales059@corp": 1, "o": 60,
		"k": 30, "kim lee": 30, "p": 90, "pat d": 90, "c": 0, "": 120,
	}
	check("imported", afterImport)

	// A batch that fails on its last entry changes no count.
	failing := []identity.ImportedUser{
		{Username: "newbie", Email: "newbie@corp.example", FullName: "Kim New"},
		{Username: "SALES000", Email: "other@corp.example", FullName: "Kim Taken"},
	}
	_, err = e.ws.ImportUsers(e.ctx, failing)
	WantCode(t, err, identity.CodeConflict)
	check("failed import", afterImport)

	// sales000-009 move to carol@... and "Carol": 0, 4 and 8 were Kim.
	for _, u := range imported[:10] {
		if _, err := e.ws.UpdateUser(e.ctx, u.ID, identity.UserUpdate{Email: fmt.Sprintf("carol%d@x.example", u.ID), FullName: "Carol"}); err != nil {
			t.Fatal(err)
		}
	}
	check("updated", map[string]int{
		"c": 10, "ca": 10, "carol": 10, "s": 60, "sales00": 10, "k": 27, "p": 83, "pat": 83,
	})

	// ops060-064 deleted: 60 and 64 were Kim.
	for _, u := range imported[60:65] {
		if _, err := e.ws.DeleteUserPermanently(e.ctx, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	check("deleted", map[string]int{"o": 55, "ops06": 5, "k": 25, "p": 80, "": 115})

	// Eight writers create five users each at once.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for w := range 8 {
		wg.Go(func() {
			for i := range 5 {
				nu := newUser(fmt.Sprintf("w%dx%d", w, i))
				nu.FullName = "Wu"
				if _, err := e.ws.CreateUser(e.ctx, nu); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check("concurrent creations", map[string]int{"w": 40, "wu": 40, "w3": 5, "w3x4": 1, "": 155})
}
