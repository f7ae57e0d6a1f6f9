package pgstore

import (
	"time"

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
