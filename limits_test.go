package identity_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// setLimits sets the workspace's limits.
func (e *testEnv) setLimits(l identity.Limits) {
	e.t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	s.Limits = l
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

// TestAttributesPerUser: 100 attributes by default and not one more; a
// value of a key the user has can be replaced at the limit; deleting one
// makes room; the limit is the workspace's setting.
func TestAttributesPerUser(t *testing.T) {
	e := newTestEnv(t, nil)
	for i := range 100 {
		if _, err := e.ws.SetAttribute(e.ctx, e.ada.ID, fmt.Sprintf("k%03d", i), "v", nil); err != nil {
			t.Fatalf("attribute %d: %v", i, err)
		}
	}
	identitytest.WantCode(t, errOf(e.ws.SetAttribute(e.ctx, e.ada.ID, "k100", "v", nil)), identity.CodeLimitReached)
	if _, err := e.ws.SetAttribute(e.ctx, e.ada.ID, "k042", "replaced", nil); err != nil {
		t.Errorf("replacing a value at the limit: %v", err)
	}
	if _, err := e.ws.DeleteAttribute(e.ctx, e.ada.ID, "k000", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.SetAttribute(e.ctx, e.ada.ID, "k100", "v", nil); err != nil {
		t.Errorf("after a deletion: %v", err)
	}
	// Another user has room of its own.
	bob := e.user("bob")
	if _, err := e.ws.SetAttribute(e.ctx, bob.ID, "k000", "v", nil); err != nil {
		t.Errorf("bob's first attribute: %v", err)
	}

	e.setLimits(identity.Limits{AttributesPerUser: 2})
	if _, err := e.ws.SetAttribute(e.ctx, bob.ID, "k001", "v", nil); err != nil {
		t.Fatal(err)
	}
	identitytest.WantCode(t, errOf(e.ws.SetAttribute(e.ctx, bob.ID, "k002", "v", nil)), identity.CodeLimitReached)
	// Lowering the limit removes nothing.
	if attrs, err := e.ws.ListAttributes(e.ctx, e.ada.ID); err != nil || len(attrs) != 100 {
		t.Errorf("ada's attributes after lowering the limit: %d, %v", len(attrs), err)
	}
}

// TestAttributesPerUserConcurrent: new keys set at once never pass the
// limit: the count is checked in the writing transaction.
func TestAttributesPerUserConcurrent(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setLimits(identity.Limits{AttributesPerUser: 5})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() { errs[i] = errOf(e.ws.SetAttribute(e.ctx, e.ada.ID, fmt.Sprintf("k%02d", i), "v", nil)) })
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, err := range errs {
		switch identity.ErrorCode(err) {
		case "":
			ok++
		case identity.CodeLimitReached:
			limited++
		}
	}
	if ok != 5 || limited != 15 {
		t.Errorf("20 new keys at once, limit 5: %d set, %d limited", ok, limited)
	}
}

// TestWebhookEndpointsPerWorkspace: 50 endpoints by default and not one
// more; deleting one makes room; the limit is the workspace's setting.
func TestWebhookEndpointsPerWorkspace(t *testing.T) {
	e := newTestEnv(t, nil)
	var first int64
	for i := range 50 {
		id := e.hook(identity.EventUserCreated)
		if i == 0 {
			first = id
		}
	}
	_, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/51", Events: []string{"user.created"}})
	identitytest.WantCode(t, err, identity.CodeLimitReached)
	if err := e.ws.DeleteWebhook(e.ctx, first); err != nil {
		t.Fatal(err)
	}
	e.hook(identity.EventUserCreated)

	e.setLimits(identity.Limits{WebhookEndpoints: 51})
	e.hook(identity.EventUserCreated)
	_, err = e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/52", Events: []string{"user.created"}})
	identitytest.WantCode(t, err, identity.CodeLimitReached)
}

// TestLimitsValidation: each limit is 0 (the default) or 1 to its
// maximum.
func TestLimitsValidation(t *testing.T) {
	tests := []struct {
		limits identity.Limits
		want   []identity.FieldError
	}{
		{identity.Limits{AttributesPerUser: 10000, WebhookEndpoints: 1000}, nil},
		{identity.Limits{AttributesPerUser: 1, WebhookEndpoints: 1}, nil},
		{identity.Limits{AttributesPerUser: 10001}, field("limits.attributesPerUser", identity.RuleRange)},
		{identity.Limits{AttributesPerUser: -1}, field("limits.attributesPerUser", identity.RuleRange)},
		{identity.Limits{WebhookEndpoints: 1001}, field("limits.webhookEndpoints", identity.RuleRange)},
		{identity.Limits{WebhookEndpoints: -1}, field("limits.webhookEndpoints", identity.RuleRange)},
	}
	for _, tt := range tests {
		e := newTestEnv(t, nil)
		s := identity.DefaultSettings()
		s.Limits = tt.limits
		err := e.ws.UpdateSettings(e.ctx, s)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%+v: %v", tt.limits, err)
			}
			continue
		}
		identitytest.WantFields(t, err, tt.want)
	}
}
