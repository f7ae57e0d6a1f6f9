package identity

import (
	"context"
	"errors"
	"time"

	"github.com/identitylib/identity/store"
)

// Retention says how long a workspace keeps records that are done with:
// finished jobs of the queue and ended sessions. The zero value of each
// field means its default; the zero Retention is the defaults. Sweep
// removes what is past them.
//
// Records that are only ever read while they are valid need no setting:
// single-use tokens (email verification, password reset, a sign-in
// waiting for its second factor, used or not), authorization requests
// and their codes, and refresh tokens are removed once they have expired,
// and grants once their absolute expiry (Grant.ExpiresAt, the end of the
// whole token family) has passed, revoked or not.
type Retention struct {
	// SucceededDeliveryDays is how many days a webhook delivery that
	// succeeded is kept after its last attempt: 1 to MaxRetentionDays; 0
	// means DefaultSucceededDeliveryDays (7).
	SucceededDeliveryDays int `json:"succeededDeliveryDays,omitempty"`
	// FailedDeliveryDays is how many days a webhook delivery that failed
	// for good is kept after its last attempt: 1 to MaxRetentionDays; 0
	// means DefaultFailedDeliveryDays (30).
	FailedDeliveryDays int `json:"failedDeliveryDays,omitempty"`
	// MailJobDays is how many days a mail job that was sent or failed for
	// good is kept after its last attempt: 1 to MaxRetentionDays; 0 means
	// DefaultMailJobDays (30).
	MailJobDays int `json:"mailJobDays,omitempty"`
	// EndedSessionDays is how many days a session is kept after it ended
	// (expired, or was revoked or signed out): 1 to MaxRetentionDays; 0
	// means DefaultEndedSessionDays (90).
	EndedSessionDays int `json:"endedSessionDays,omitempty"`
	// AuditDays is how many days a record of the audit trail is kept: 1
	// to MaxRetentionDays; 0 means DefaultAuditDays (365, the year
	// auditors expect).
	AuditDays int `json:"auditDays,omitempty"`
}

// Retention defaults and bounds, in days.
const (
	DefaultSucceededDeliveryDays = 7
	DefaultFailedDeliveryDays    = 30
	DefaultMailJobDays           = 30
	DefaultEndedSessionDays      = 90
	DefaultAuditDays             = 365
	// MaxRetentionDays is the longest a Retention field may say: ten
	// years.
	MaxRetentionDays = 3650
)

// day is the unit of Retention.
const day = 24 * time.Hour

// orDefault returns days as a duration, or def days when days is 0.
func orDefault(days, def int) time.Duration {
	if days == 0 {
		days = def
	}
	return time.Duration(days) * day
}

func (r Retention) validate(p *problems) {
	for _, f := range []struct {
		field string
		days  int
		def   int
	}{
		{"retention.succeededDeliveryDays", r.SucceededDeliveryDays, DefaultSucceededDeliveryDays},
		{"retention.failedDeliveryDays", r.FailedDeliveryDays, DefaultFailedDeliveryDays},
		{"retention.mailJobDays", r.MailJobDays, DefaultMailJobDays},
		{"retention.endedSessionDays", r.EndedSessionDays, DefaultEndedSessionDays},
		{"retention.auditDays", r.AuditDays, DefaultAuditDays},
	} {
		if f.days < 0 || f.days > MaxRetentionDays {
			p.add(f.field, RuleRange, "must be between 1 and %d days (0 means %d)", MaxRetentionDays, f.def)
		}
	}
}

// SweepBatch is the most records one transaction of Sweep removes: each
// batch is an Update of its own, so a sweep never holds a long write
// transaction, and other writers run between its batches.
const SweepBatch = 500

// DefaultRetentionSweepInterval is how often SweepEvery sweeps when it is
// given no interval.
const DefaultRetentionSweepInterval = time.Minute

// SweepResult counts the records one Sweep removed, of every workspace.
type SweepResult struct {
	// Deliveries are webhook deliveries, succeeded or failed.
	Deliveries int
	// MailJobs are mail jobs, sent or failed.
	MailJobs int
	// Sessions are ended sessions.
	Sessions int
	// Tokens are expired single-use tokens, authorization requests,
	// refresh tokens and grants.
	Tokens int
	// AuditRecords are records of the audit trail.
	AuditRecords int
}

// Total is the number of records the sweep removed.
func (r SweepResult) Total() int {
	return r.Deliveries + r.MailJobs + r.Sessions + r.Tokens + r.AuditRecords
}

// minus returns what r removed beyond before.
func (r SweepResult) minus(before SweepResult) SweepResult {
	return SweepResult{
		Deliveries: r.Deliveries - before.Deliveries, MailJobs: r.MailJobs - before.MailJobs,
		Sessions: r.Sessions - before.Sessions, Tokens: r.Tokens - before.Tokens,
		AuditRecords: r.AuditRecords - before.AuditRecords,
	}
}

// Sweep removes, in every workspace, what its Retention says is past
// keeping at now, and the expired records that need no setting (see
// Retention). It removes at most SweepBatch records per transaction and
// repeats until nothing is left to remove; the store finds them by time,
// so a sweep costs in proportion to what it removes. A workspace deleted
// meanwhile is skipped. In each workspace where it removed anything, it
// leaves one audit record, retention.swept, counting what (the system is
// its actor). It returns what it removed, also when it fails part-way.
func (s *Service) Sweep(ctx context.Context, now time.Time) (SweepResult, error) {
	var res SweepResult
	var recs []store.Workspace
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.Workspaces()
		return err
	})
	if err != nil {
		return res, fromStore(err, "workspace")
	}
	now = now.UTC().Truncate(time.Microsecond)
	for _, rec := range recs {
		settings, err := decodeSettings(rec.Settings)
		if err != nil {
			return res, err
		}
		r := settings.Retention
		slug := rec.Slug
		before := res
		for _, step := range []struct {
			count *int
			fn    func(tx store.Tx) (int, error)
		}{
			{&res.Deliveries, func(tx store.Tx) (int, error) {
				return tx.DeleteFinishedDeliveries(slug, store.JobWebhook, store.DeliverySucceeded,
					now.Add(-orDefault(r.SucceededDeliveryDays, DefaultSucceededDeliveryDays)), SweepBatch)
			}},
			{&res.Deliveries, func(tx store.Tx) (int, error) {
				return tx.DeleteFinishedDeliveries(slug, store.JobWebhook, store.DeliveryFailed,
					now.Add(-orDefault(r.FailedDeliveryDays, DefaultFailedDeliveryDays)), SweepBatch)
			}},
			{&res.MailJobs, func(tx store.Tx) (int, error) {
				return tx.DeleteFinishedDeliveries(slug, store.JobMail, store.DeliverySucceeded,
					now.Add(-orDefault(r.MailJobDays, DefaultMailJobDays)), SweepBatch)
			}},
			{&res.MailJobs, func(tx store.Tx) (int, error) {
				return tx.DeleteFinishedDeliveries(slug, store.JobMail, store.DeliveryFailed,
					now.Add(-orDefault(r.MailJobDays, DefaultMailJobDays)), SweepBatch)
			}},
			{&res.Sessions, func(tx store.Tx) (int, error) {
				return tx.DeleteEndedSessions(slug, now.Add(-orDefault(r.EndedSessionDays, DefaultEndedSessionDays)), SweepBatch)
			}},
			{&res.Tokens, func(tx store.Tx) (int, error) { return tx.DeleteExpiredTokens(slug, now, SweepBatch) }},
			{&res.AuditRecords, func(tx store.Tx) (int, error) {
				cutoff := now.Add(-orDefault(r.AuditDays, DefaultAuditDays))
				return tx.DeleteAuditRecords(slug, auditIDPrefix(cutoff)+"0000000000000000", SweepBatch)
			}},
		} {
			gone, err := s.sweepBatches(ctx, step.fn, step.count)
			if err != nil {
				return res, err
			}
			if gone {
				break
			}
		}
		if err := s.auditSwept(ctx, slug, res.minus(before)); err != nil {
			return res, err
		}
	}
	return res, nil
}

// auditSwept leaves the record of what one workspace's sweep removed,
// when it removed anything.
func (s *Service) auditSwept(ctx context.Context, slug string, removed SweepResult) error {
	if removed.Total() == 0 {
		return nil
	}
	var changes auditChanges
	for _, c := range []struct {
		field string
		n     int
	}{
		{"removed.deliveries", removed.Deliveries}, {"removed.mailJobs", removed.MailJobs},
		{"removed.sessions", removed.Sessions}, {"removed.expired", removed.Tokens},
		{"removed.auditRecords", removed.AuditRecords},
	} {
		if c.n > 0 {
			changes = changes.set(c.field, nil, c.n)
		}
	}
	w := &Workspace{svc: s, slug: slug}
	err := w.auditAlone(ctx, auditEntry{
		action: AuditRetentionSwept, target: AuditTarget{Kind: TargetWorkspace, ID: slug, Display: slug},
		reason: "retention", changes: changes, actor: &Actor{Kind: ActorSystem},
	})
	if isNotFound(err) {
		return nil // deleted meanwhile
	}
	return err
}

// sweepBatches runs fn in Updates of its own until it removes fewer than
// SweepBatch records, adding what it removes to count. It reports whether
// the workspace no longer exists.
func (s *Service) sweepBatches(ctx context.Context, fn func(tx store.Tx) (int, error), count *int) (gone bool, err error) {
	for {
		var n int
		err := s.store.Update(ctx, func(tx store.Tx) (err error) {
			n, err = fn(tx)
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, fromStore(err, "workspace")
		}
		*count += n
		if n < SweepBatch {
			return false, nil
		}
	}
}

// SweepEvery calls Sweep at once and then every interval
// (DefaultRetentionSweepInterval, a minute, when interval <= 0) with the
// Service's clock until ctx ends, and returns then. report, when not nil,
// is told of every sweep that removed records or failed. A long-running
// program runs it in a goroutine of its own (identityd serve does):
//
//	go svc.SweepEvery(ctx, 0, nil)
//
// As with SweepIdempotencyEvery, a panic in a sweep does not end the
// sweeper: it is a failed sweep, reported as a CodeInternal error whose
// message holds the panic's value and whose cause its stack; without
// report, a failure is logged with slog.Default(). A panic in report is
// logged so too.
func (s *Service) SweepEvery(ctx context.Context, interval time.Duration, report func(SweepResult, error)) {
	if interval <= 0 {
		interval = DefaultRetentionSweepInterval
	}
	sweepEvery(ctx, interval, "retention sweep", func(ctx context.Context) (SweepResult, error) {
		return s.Sweep(ctx, s.timestamp())
	}, func(res SweepResult) bool { return res.Total() > 0 }, report)
}
