package identity

import (
	"context"
	"time"

	"github.com/identitylib/identity/store"
)

// OverviewCountMax is where the counts of an Overview stop: "10,000+".
const OverviewCountMax = 10_000

// Overview is a workspace at a glance, for an operator's dashboard.
type Overview struct {
	// Since is the start of the window of SignIns and SignInFailures:
	// 24 hours before the overview was read.
	Since time.Time `json:"since"`
	// Users counts the workspace's users, disabled ones included.
	Users int `json:"users"`
	// SignIns and SignInFailures count the sign_in.succeeded and
	// sign_in.failed records of the audit trail since Since, each up to
	// OverviewCountMax (Capped past it).
	SignIns        AuditCount `json:"signIns"`
	SignInFailures AuditCount `json:"signInFailures"`
	// LockedUsers counts the accounts locked now that the first call of
	// ListLockedUsers (a page of MaxPageLimit) finds; LockedUsersMore says
	// that the list goes on, so that the count is a floor ("100+").
	LockedUsers     int  `json:"lockedUsers"`
	LockedUsersMore bool `json:"lockedUsersMore"`
	// Queue is the workspace's share of the delivery queue, as
	// Workspace.GetQueueStats reads it: among the QueueStatsWalkMax
	// earliest due jobs of every workspace, a floor when Capped.
	Queue QueueStats `json:"queue"`
	// FailingEndpoints are the webhook endpoints whose deliveries are
	// failing (FailingSince set) or that the delivery rules disabled, in
	// ascending id order, never nil.
	FailingEndpoints []WebhookEndpoint `json:"failingEndpoints"`
}

// GetOverview reads the figures of the workspace's dashboard: its users,
// the sign-ins and failed sign-ins of the last 24 hours (from the audit
// trail, bounded counts), the accounts locked now, its share of the
// delivery queue, and its failing or disabled webhook endpoints. It adds
// no counter to any write: each figure is read where it is kept (the
// stores' user count, the start of the queue's due index, at most
// QueueStatsWalkMax jobs of it, the trail's index by action, the
// account.locked records, the endpoints, at most Limits.WebhookEndpoints
// of them), each in read transactions of its own, so the figures may be
// of slightly different moments. It costs what CountAuditRecords does for
// up to OverviewCountMax records, twice, and one call of
// ListLockedUsers.
func (w *Workspace) GetOverview(ctx context.Context) (Overview, error) {
	now := w.svc.timestamp()
	out := Overview{Since: now.Add(-24 * time.Hour), FailingEndpoints: []WebhookEndpoint{}}
	users, err := w.ListUsers(ctx, "", &Page{Limit: 1})
	if err != nil {
		return Overview{}, err
	}
	out.Users = users.Total
	for _, c := range []struct {
		action AuditAction
		into   *AuditCount
	}{{AuditSignInSucceeded, &out.SignIns}, {AuditSignInFailed, &out.SignInFailures}} {
		if *c.into, err = w.CountAuditRecords(ctx, &AuditFilter{Action: string(c.action), Since: out.Since}, OverviewCountMax); err != nil {
			return Overview{}, err
		}
	}
	locked, err := w.ListLockedUsers(ctx, &ScanOptions{Limit: MaxPageLimit})
	if err != nil {
		return Overview{}, err
	}
	out.LockedUsers, out.LockedUsersMore = len(locked.Items), locked.HasMore
	if out.Queue, err = w.GetQueueStats(ctx); err != nil {
		return Overview{}, err
	}
	err = w.view(ctx, func(tx store.Tx) error {
		out.FailingEndpoints = []WebhookEndpoint{}
		hooks, _, err := tx.Webhooks(w.slug, 0, MaxWebhookEndpoints)
		for _, h := range hooks {
			if !h.Enabled || !h.FailingSince.IsZero() {
				out.FailingEndpoints = append(out.FailingEndpoints, webhookFromRecord(h))
			}
		}
		return err
	})
	if err != nil {
		return Overview{}, fromStore(err, "workspace")
	}
	return out, nil
}
