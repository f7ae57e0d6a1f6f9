package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/identitylib/identity"
)

// retentionField is one field of identity.Retention as workspace
// retention shows and changes it.
type retentionField struct {
	flag  string // the flag that changes it
	label string // its line in the output
	days  func(*identity.Retention) *int
	def   int    // what 0 stands for
	what  string // the flag's help: keep WHAT N days AFTER
	after string
}

// retentionFields are the fields of identity.Retention, in the order
// workspace retention prints them.
var retentionFields = []retentionField{
	{"audit-days", "audit records", func(r *identity.Retention) *int { return &r.AuditDays }, identity.DefaultAuditDays,
		"the records of the audit trail", ""},
	{"succeeded-delivery-days", "succeeded deliveries", func(r *identity.Retention) *int { return &r.SucceededDeliveryDays },
		identity.DefaultSucceededDeliveryDays, "webhook deliveries that succeeded", " after their last attempt"},
	{"failed-delivery-days", "failed deliveries", func(r *identity.Retention) *int { return &r.FailedDeliveryDays },
		identity.DefaultFailedDeliveryDays, "webhook deliveries that failed for good", " after their last attempt"},
	{"mail-job-days", "mail jobs", func(r *identity.Retention) *int { return &r.MailJobDays }, identity.DefaultMailJobDays,
		"emails sent or failed for good", " after their last attempt"},
	{"ended-session-days", "ended sessions", func(r *identity.Retention) *int { return &r.EndedSessionDays },
		identity.DefaultEndedSessionDays, "sessions", " after they ended (expired, or were revoked or signed out)"},
}

// workspaceRetention shows how long the workspace keeps what it is done
// with, and changes the periods whose flags are given: identityd
// workspace retention -workspace SLUG [-audit-days N]
// [-succeeded-delivery-days N] [-failed-delivery-days N] [-mail-job-days
// N] [-ended-session-days N]. serve's retention sweep removes what is
// older, every minute.
func workspaceRetention(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	values := make([]*int, len(retentionFields))
	for i, f := range retentionFields {
		values[i] = fs.Int(f.flag, 0, fmt.Sprintf("keep %s `N` days%s (1-%d; default %d)", f.what, f.after, identity.MaxRetentionDays, f.def))
	}
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	given := givenFlags(fs)
	for i, f := range retentionFields {
		if given[f.flag] && (*values[i] < 1 || *values[i] > identity.MaxRetentionDays) {
			return usagef(fs, "-%s must be between 1 and %d", f.flag, identity.MaxRetentionDays)
		}
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			return err
		}
		if len(given) > 1 { // -workspace is always given
			for i, f := range retentionFields {
				if given[f.flag] {
					*f.days(&s.Retention) = *values[i]
				}
			}
			if err := ws.UpdateSettings(ctx, s); err != nil {
				return err
			}
		}
		for _, f := range retentionFields {
			days := *f.days(&s.Retention)
			if days == 0 {
				days = f.def
			}
			fmt.Fprintf(e.stdout, "%s: %d days%s\n", f.label, days, defaultMark(*f.days(&s.Retention) == 0))
		}
		return nil
	})
}
