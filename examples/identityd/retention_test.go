package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

func TestWorkspaceRetention(t *testing.T) {
	db, _ := newDB(t)
	synopsis := "Usage: identityd [-db FILE] workspace retention -workspace SLUG [-audit-days N] [-succeeded-delivery-days N] " +
		"[-failed-delivery-days N] [-mail-job-days N] [-ended-session-days N]\nRun 'identityd -h' for help.\n"
	for _, step := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{nil, exitOK, "audit records: 365 days (default)\nsucceeded deliveries: 7 days (default)\nfailed deliveries: 30 days (default)\n" +
			"mail jobs: 30 days (default)\nended sessions: 90 days (default)\n", ""},
		{[]string{"-audit-days", "730"}, exitOK, "audit records: 730 days\nsucceeded deliveries: 7 days (default)\nfailed deliveries: 30 days (default)\n" +
			"mail jobs: 30 days (default)\nended sessions: 90 days (default)\n", ""},
		{[]string{"-audit-days", "0"}, exitUsage, "", "identityd: workspace retention: -audit-days must be between 1 and 3650\n" + synopsis},
		{[]string{"-audit-days", "3651"}, exitUsage, "", "identityd: workspace retention: -audit-days must be between 1 and 3650\n" + synopsis},
		{[]string{"-ended-session-days", "-1"}, exitUsage, "", "identityd: workspace retention: -ended-session-days must be between 1 and 3650\n" + synopsis},
		{[]string{"-succeeded-delivery-days", "1", "-failed-delivery-days", "3650", "-mail-job-days", "2", "-ended-session-days", "3"}, exitOK,
			"audit records: 730 days\nsucceeded deliveries: 1 days\nfailed deliveries: 3650 days\nmail jobs: 2 days\nended sessions: 3 days\n", ""},
		{[]string{"-audit-days", "1"}, exitOK,
			"audit records: 1 days\nsucceeded deliveries: 1 days\nfailed deliveries: 3650 days\nmail jobs: 2 days\nended sessions: 3 days\n", ""},
	} {
		r := runCmd(t, append([]string{"-db", db, "workspace", "retention", "-workspace", "acme"}, step.args...)...)
		if r.code != step.code || r.stdout != step.stdout || r.stderr != step.stderr {
			t.Errorf("workspace retention %v: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
				step.args, r.code, r.stdout, r.stderr, step.code, step.stdout, step.stderr)
		}
	}
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := identity.Retention{AuditDays: 1, SucceededDeliveryDays: 1, FailedDeliveryDays: 3650, MailJobDays: 2, EndedSessionDays: 3}
		if diff := cmp.Diff(want, s.Retention); diff != "" {
			t.Errorf("the stored retention (-want +got):\n%s", diff)
		}
	})
	// Each change is the operator's settings.changed; a look changes
	// nothing, and a refused change is not made.
	var got []actionActor
	for _, r := range auditTrail(t, db) {
		if r.Action == identity.AuditSettingsChanged {
			got = append(got, actionActor{r.Action, r.Actor})
		}
	}
	op := me(t)
	want := []actionActor{{identity.AuditSettingsChanged, op}, {identity.AuditSettingsChanged, op}, {identity.AuditSettingsChanged, op}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the settings.changed records (-want +got):\n%s", diff)
	}
}
