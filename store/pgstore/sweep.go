package pgstore

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// Retention. Each Delete* of a sweep is one DELETE of the rows an index
// of migration 0008 finds (WHERE ctid IN (SELECT ctid ... ORDER BY time
// LIMIT n)), so that it costs in proportion to what it removes. The
// per-user and per-grant indexes are PostgreSQL's own and follow the
// rows.

// finishedAt and endedAt are store.Delivery.FinishedAt and
// store.Session.EndedAt in SQL, as the indexes of migration 0008 spell
// them.
const (
	finishedAt = `(CASE WHEN last_attempt_at = '0001-01-01 00:00:00+00' THEN created_at ELSE last_attempt_at END)`
	endedAt    = `(CASE WHEN revoked_at <> '0001-01-01 00:00:00+00' AND revoked_at < expires_at THEN revoked_at ELSE expires_at END)`
)

// deleted returns n, or the error of a sweep that removed nothing in a
// workspace that may not exist.
func (t *tx) deleted(slug string, n int) (int, error) {
	if n > 0 {
		return n, nil
	}
	if !storable(slug) {
		return 0, notFound("workspace %q", slug)
	}
	return 0, t.emptyResult(slug)
}

// DeleteFinishedDeliveries implements store.Tx.
func (t *tx) DeleteFinishedDeliveries(slug string, kind store.JobKind, status store.DeliveryStatus, before time.Time, limit int) (int, error) {
	if status == store.DeliveryPending || limit <= 0 || !storable(slug) || !storable(string(kind)) || !storable(string(status)) {
		return t.deleted(slug, 0)
	}
	tag, err := t.exec(`DELETE FROM deliveries WHERE ctid IN (
		SELECT ctid FROM deliveries WHERE workspace = $1 AND kind = $2 AND status = $3 AND status <> 'pending'
		AND `+finishedAt+` <= $4 ORDER BY `+finishedAt+` LIMIT $5)`, slug, string(kind), string(status), ts(before), limit)
	if err != nil {
		return 0, err
	}
	return t.deleted(slug, int(tag.RowsAffected()))
}

// DeleteEndedSessions implements store.Tx.
func (t *tx) DeleteEndedSessions(slug string, before time.Time, limit int) (int, error) {
	if limit <= 0 || !storable(slug) {
		return t.deleted(slug, 0)
	}
	tag, err := t.exec(`DELETE FROM sessions WHERE ctid IN (
		SELECT ctid FROM sessions WHERE workspace = $1 AND `+endedAt+` <= $2
		ORDER BY `+endedAt+` LIMIT $3)`, slug, ts(before), limit)
	if err != nil {
		return 0, err
	}
	return t.deleted(slug, int(tag.RowsAffected()))
}

// DeleteExpiredTokens implements store.Tx: single-use tokens, then
// authorization requests, refresh tokens and grants (with their refresh
// tokens), one statement each while the limit lasts.
func (t *tx) DeleteExpiredTokens(slug string, before time.Time, limit int) (int, error) {
	if limit <= 0 || !storable(slug) {
		return t.deleted(slug, 0)
	}
	n := 0
	for _, table := range []string{"verification_tokens", "auth_requests", "refresh_tokens"} {
		if n >= limit {
			return n, nil
		}
		tag, err := t.exec(`DELETE FROM `+table+` WHERE ctid IN (
			SELECT ctid FROM `+table+` WHERE workspace = $1 AND expires_at <= $2
			ORDER BY expires_at LIMIT $3)`, slug, ts(before), limit-n)
		if err != nil {
			return n, err
		}
		n += int(tag.RowsAffected())
	}
	if n >= limit {
		return n, nil
	}
	var removed int64
	_, err := t.queryRow(`WITH g AS (
			DELETE FROM grants WHERE ctid IN (
				SELECT ctid FROM grants WHERE workspace = $1 AND expires_at <= $2
				ORDER BY expires_at LIMIT $3)
			RETURNING id),
		r AS (DELETE FROM refresh_tokens WHERE workspace = $1 AND grant_id IN (SELECT id FROM g) RETURNING 1)
		SELECT (SELECT count(*) FROM g) + (SELECT count(*) FROM r)`,
		[]any{slug, ts(before), limit - n}, &removed)
	if err != nil {
		return n, err
	}
	return t.deleted(slug, n+int(removed))
}

// Pages of listings: one query for the page (ORDER BY ... LIMIT OFFSET,
// along the indexes deliveries_endpoint, deliveries_mail and
// sessions_user) and one for the count.

// DeliveriesPage implements store.Tx.
func (t *tx) DeliveriesPage(slug string, endpointID int64, offset, limit int) ([]store.Delivery, int, error) {
	return t.jobsPage(slug, "endpoint_id = $2", offset, limit, slug, endpointID)
}

// MailJobsPage implements store.Tx.
func (t *tx) MailJobsPage(slug string, offset, limit int) ([]store.Delivery, int, error) {
	return t.jobsPage(slug, "kind = 'mail'", offset, limit, slug)
}

// jobsPage returns one page of the jobs of the workspace slug ($1) that
// match where, in ascending id order, and how many match.
func (t *tx) jobsPage(slug, where string, offset, limit int, args ...any) ([]store.Delivery, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	var total int64
	if _, err := t.queryRow("SELECT count(*) FROM deliveries WHERE workspace = $1 AND "+where, args, &total); err != nil {
		return nil, 0, err
	}
	if total == 0 {
		return nil, 0, t.emptyResult(slug)
	}
	if limit <= 0 {
		return nil, int(total), nil
	}
	n := len(args)
	ds, err := collect(t, fmt.Sprintf("SELECT %s FROM deliveries WHERE workspace = $1 AND %s ORDER BY id LIMIT $%d OFFSET $%d", deliveryColumns, where, n+1, n+2),
		append(args, limit, max(offset, 0)), func(r pgx.Rows) (store.Delivery, error) { return scanDelivery(r) })
	return ds, int(total), err
}

// UserSessionsPage implements store.Tx.
func (t *tx) UserSessionsPage(slug string, userID int64, offset, limit int) ([]store.Session, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	var total int64
	if _, err := t.queryRow("SELECT count(*) FROM sessions WHERE workspace = $1 AND user_id = $2", []any{slug, userID}, &total); err != nil {
		return nil, 0, err
	}
	if total == 0 {
		return nil, 0, t.emptyResult(slug)
	}
	if limit <= 0 {
		return nil, int(total), nil
	}
	ss, err := collect(t, "SELECT "+sessionColumns+" FROM sessions WHERE workspace = $1 AND user_id = $2 ORDER BY created_at, id LIMIT $3 OFFSET $4",
		[]any{slug, userID, limit, max(offset, 0)}, func(r pgx.Rows) (store.Session, error) { return scanSession(r) })
	return ss, int(total), err
}
