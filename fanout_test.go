package identity_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// TestEventFanout: an event goes to the enabled endpoints subscribed to
// its type, and follows changes of an endpoint's events (made in the
// store, as an update would), disabling and deletion.
func TestEventFanout(t *testing.T) {
	e := newTestEnv(t, nil)
	created := e.hook(identity.EventUserCreated)                         // 1
	both := e.hook(identity.EventUserCreated, identity.EventUserUpdated) // 2
	updated := e.hook(identity.EventUserUpdated)                         // 3
	disabled := e.hook(identity.EventUserCreated)                        // 4
	e.disableInStore(disabled)
	counts := func() []int {
		var out []int
		for _, h := range []int64{created, both, updated, disabled} {
			out = append(out, len(e.payloads(h)))
		}
		return out
	}
	setEvents := func(id int64, events ...string) {
		t.Helper()
		err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
			w, err := tx.Webhook("acme", id)
			if err != nil {
				return err
			}
			w.Events = events
			return tx.PutWebhook("acme", w)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	step := func(name string) { got = append(got, fmt.Sprint(name, " ", counts())) }
	e.user("bob")
	step("user.created")
	setEvents(created, string(identity.EventUserUpdated))
	setEvents(updated, string(identity.EventUserCreated))
	e.user("carol")
	step("user.created after changes")
	if err := e.ws.DeleteWebhook(e.ctx, both); err != nil {
		t.Fatal(err)
	}
	e.user("dave")
	step("user.created after deleting 2")
	want := []string{
		"user.created [1 1 0 0]",
		"user.created after changes [1 2 1 0]",
		"user.created after deleting 2 [1 0 2 0]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries of endpoints 1-4 (-want +got):\n%s", diff)
	}
}
