package identity_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestListingPages: Deliveries, EmailJobs and Sessions return one page
// (a nil Page is the first 20) in their order, with the number in all;
// an invalid page is refused.
func TestListingPages(t *testing.T) {
	e := newTestEnv(t, &identity.Options{})
	hook := e.hook(identity.EventUserCreated)
	for i := range 24 {
		e.user(fmt.Sprint("user-", i)) // delivery i+1 to the hook
	}
	for range 3 {
		e.clock.Advance(time.Minute)
		if _, err := e.ws.Login(e.ctx, "ada", adaPassword); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		IDs                  []string
		Total, Offset, Limit int
	}
	deliveries := func(p *identity.Page) (got, error) {
		l, err := e.ws.ListDeliveries(e.ctx, hook, p)
		var ids []string
		for _, d := range l.Items {
			ids = append(ids, fmt.Sprint(d.ID))
		}
		return got{ids, l.Total, l.Offset, l.Limit}, err
	}
	sessions := func(p *identity.Page) (got, error) {
		l, err := e.ws.ListSessions(e.ctx, e.ada.ID, p)
		var ids []string
		for _, s := range l.Items {
			ids = append(ids, s.CreatedAt.Sub(e.ada.CreatedAt).String())
		}
		return got{ids, l.Total, l.Offset, l.Limit}, err
	}
	for _, c := range []struct {
		name string
		list func(*identity.Page) (got, error)
		page *identity.Page
		want got
	}{
		{"DeliveriesFirst", deliveries, nil, got{[]string{
			"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20",
		}, 24, 0, 20}},
		{"DeliveriesLast", deliveries, &identity.Page{Offset: 20, Limit: 10}, got{[]string{"21", "22", "23", "24"}, 24, 20, 10}},
		{"DeliveriesPastTheEnd", deliveries, &identity.Page{Offset: 30, Limit: 10}, got{nil, 24, 30, 10}},
		{"Sessions", sessions, &identity.Page{Offset: 1, Limit: 1}, got{[]string{"2m0s"}, 3, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := c.list(c.page)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, g); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("EmailJobs", func(t *testing.T) {
		l, err := e.ws.ListEmailJobs(e.ctx, &identity.Page{Limit: 5})
		if err != nil || l.Items == nil || len(l.Items) != 0 || l.Total != 0 || l.Limit != 5 {
			t.Errorf("EmailJobs without SMTP = %+v, %v; want an empty page of 5", l, err)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		want := []identity.FieldError{
			{Field: "offset", Rule: identity.RuleRange, Message: "must be 0 or more"},
			{Field: "limit", Rule: identity.RuleRange, Message: "must be between 1 and 100"},
		}
		bad := &identity.Page{Offset: -1, Limit: 101}
		_, err1 := e.ws.ListDeliveries(e.ctx, hook, bad)
		_, err2 := e.ws.ListEmailJobs(e.ctx, bad)
		_, err3 := e.ws.ListSessions(e.ctx, e.ada.ID, bad)
		for i, err := range []error{err1, err2, err3} {
			var fields []identity.FieldError
			if ie, ok := err.(*identity.Error); ok {
				fields = ie.Fields
			}
			if diff := cmp.Diff(want, fields); diff != "" {
				t.Errorf("listing %d with %+v: %v (-want +got):\n%s", i, *bad, err, diff)
			}
		}
	})
}
