package pgstore

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// pending is store.DeliveryPending as an SQL literal. The due index
// (deliveries_due) is a partial index on status = 'pending', and only a
// query that names the same literal can use it.
const pending = "'pending'"

// deliveryColumns are the columns scanDelivery reads, in its order.
const deliveryColumns = `id, kind, endpoint_id, event_id, event_type, payload, created_at, status, attempts,
	next_attempt_at, lease_until, lease_owner, last_attempt_at, last_status, last_error, user_id`

// scanDelivery reads a row of deliveryColumns, preceded by the columns
// that head point to.
func scanDelivery(r pgx.Row, head ...any) (store.Delivery, error) {
	var d store.Delivery
	var endpoint *int64
	var kind, status string
	var lastError []byte
	err := r.Scan(append(head, &d.ID, &kind, &endpoint, &d.EventID, &d.EventType, &d.Payload, &d.CreatedAt, &status,
		&d.Attempts, &d.NextAttemptAt, &d.LeaseUntil, &d.LeaseOwner, &d.LastAttemptAt, &d.LastStatus, &lastError, &d.UserID)...)
	if endpoint != nil {
		d.EndpointID = *endpoint
	}
	d.Kind, d.Status, d.LastError = store.JobKind(kind), store.DeliveryStatus(status), string(lastError)
	return d, err
}

// PutDelivery implements store.Tx. A mail job has a NULL endpoint_id; a
// webhook job names an endpoint that must exist, which the statement
// checks by joining it rather than letting the foreign key fail.
func (t *tx) PutDelivery(slug string, d store.Delivery) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("event id", d.EventID, "event type", d.EventType,
		"delivery status", string(d.Status), "lease owner", d.LeaseOwner); err != nil {
		return err
	}
	var endpoint *int64
	if d.Kind == store.JobWebhook {
		endpoint = &d.EndpointID
	}
	tag, err := t.exec(`INSERT INTO deliveries (workspace, id, endpoint_id, event_id, event_type, payload, created_at,
			status, attempts, next_attempt_at, lease_until, lease_owner, last_attempt_at, last_status, last_error, due_at, kind, user_id)
		SELECT w.slug, $2::bigint, $3::bigint, $4::text, $5::text, $6::bytea, $7::timestamptz,
			$8::text, $9::bigint, $10::timestamptz, $11::timestamptz, $12::text, $13::timestamptz, $14::bigint, $15::bytea, $16::timestamptz, $17::text, $18::bigint
		FROM workspaces w LEFT JOIN webhooks h ON h.workspace = w.slug AND h.id = $3::bigint
		WHERE w.slug = $1 AND ($3::bigint IS NULL OR h.id IS NOT NULL)
		ON CONFLICT (workspace, id) DO UPDATE SET kind = excluded.kind, endpoint_id = excluded.endpoint_id,
			event_id = excluded.event_id, event_type = excluded.event_type, payload = excluded.payload,
			created_at = excluded.created_at, status = excluded.status, attempts = excluded.attempts,
			next_attempt_at = excluded.next_attempt_at, lease_until = excluded.lease_until,
			lease_owner = excluded.lease_owner, last_attempt_at = excluded.last_attempt_at,
			last_status = excluded.last_status, last_error = excluded.last_error, due_at = excluded.due_at,
			user_id = excluded.user_id`,
		slug, d.ID, endpoint, d.EventID, d.EventType, bin(d.Payload), ts(d.CreatedAt),
		string(d.Status), d.Attempts, ts(d.NextAttemptAt), ts(d.LeaseUntil), d.LeaseOwner,
		ts(d.LastAttemptAt), d.LastStatus, []byte(d.LastError), ts(d.DueAt()), string(d.Kind), d.UserID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return t.missing(slug, "webhook endpoint %d", d.EndpointID)
	}
	t.knowSpace(slug)
	return nil
}

// Delivery implements store.Tx.
func (t *tx) Delivery(slug string, id int64) (store.Delivery, error) {
	return t.delivery(slug, id, "")
}

// ClaimDelivery implements store.Tx with SELECT ... FOR UPDATE SKIP
// LOCKED: a delivery that another transaction has locked for its own
// claim is skipped at once, not waited for, and reported as taken. A
// delivery that another transaction changed and committed since this
// one's snapshot fails the transaction with a serialization failure, and
// Update runs it again.
func (t *tx) ClaimDelivery(slug string, id int64) (store.Delivery, bool, error) {
	d, err := t.delivery(slug, id, " FOR UPDATE SKIP LOCKED")
	switch {
	case err == nil:
		return d, true, nil
	case errors.Is(err, store.ErrNotFound) && t.spaces[slug]:
		return store.Delivery{}, false, nil // gone, or locked by another
	default:
		return store.Delivery{}, false, err
	}
}

// delivery reads one delivery with the query's suffix (a locking clause).
func (t *tx) delivery(slug string, id int64, suffix string) (store.Delivery, error) {
	if !storable(slug) {
		return store.Delivery{}, notFound("workspace %q", slug)
	}
	d, err := getRow(t, slug, t.row("SELECT "+deliveryColumns+" FROM deliveries WHERE workspace = $1 AND id = $2"+suffix, slug, id),
		func(r pgx.Row) (store.Delivery, error) { return scanDelivery(r) }, "delivery %d", id)
	if err == nil {
		t.knowSpace(slug)
	}
	return d, err
}

// Deliveries implements store.Tx.
func (t *tx) Deliveries(slug string, endpointID int64) ([]store.Delivery, error) {
	return t.jobs(slug, "endpoint_id = $2", slug, endpointID)
}

// MailJobs implements store.Tx.
func (t *tx) MailJobs(slug string) ([]store.Delivery, error) {
	return t.jobs(slug, "kind = 'mail'", slug)
}

// jobs returns the jobs of the workspace slug ($1) that match where, in
// ascending id order.
func (t *tx) jobs(slug, where string, args ...any) ([]store.Delivery, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT "+deliveryColumns+" FROM deliveries WHERE workspace = $1 AND "+where+" ORDER BY id",
		args, func(r pgx.Row) (store.Delivery, error) { return scanDelivery(r) })
}

// DueDeliveries implements store.Tx by reading the start of the due index.
// Ties in due time come in ascending id order, then slug order.
func (t *tx) DueDeliveries(now time.Time, limit int) ([]store.QueuedDelivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	return collect(t, "SELECT workspace, "+deliveryColumns+` FROM deliveries
		WHERE status = `+pending+` AND due_at <= $1 ORDER BY due_at, id, workspace LIMIT $2`,
		[]any{ts(now), limit}, func(r pgx.Rows) (store.QueuedDelivery, error) {
			var q store.QueuedDelivery
			var err error
			q.Delivery, err = scanDelivery(r, &q.Workspace)
			return q, err
		})
}

// NextDueAt implements store.Tx.
func (t *tx) NextDueAt() (time.Time, bool, error) {
	var next time.Time
	found, err := t.queryRow("SELECT due_at FROM deliveries WHERE status = "+pending+" ORDER BY due_at LIMIT 1", nil, &next)
	if err != nil || !found {
		return time.Time{}, false, err
	}
	return next, true, nil
}

// PendingDeliveries implements store.Tx by counting the entries of the due
// index.
func (t *tx) PendingDeliveries() (int, error) {
	var n int
	_, err := t.queryRow("SELECT count(*) FROM deliveries WHERE status = "+pending, nil, &n)
	return n, err
}

// WorkspaceQueue implements store.Tx in one query over the start of the
// due index, in the order DueDeliveries reads it: its first limit entries,
// counted where they are the workspace's, and whether an entry follows
// them, by a second walk of the same entries that only skips them (an
// index-only scan of a few pages, cheaper than numbering the rows of the
// first).
func (t *tx) WorkspaceQueue(slug string, limit int) (store.WorkspaceQueue, error) {
	if err := t.requireWorkspace(slug); err != nil {
		return store.WorkspaceQueue{}, err
	}
	limit = max(limit, 0)
	var n int
	var next *time.Time
	var more bool
	_, err := t.queryRow(`SELECT count(*) FILTER (WHERE workspace = $1), min(due_at) FILTER (WHERE workspace = $1),
			EXISTS (SELECT FROM deliveries WHERE status = `+pending+` ORDER BY due_at, id, workspace OFFSET $2 LIMIT 1)
		FROM (SELECT workspace, due_at FROM deliveries WHERE status = `+pending+` ORDER BY due_at, id, workspace LIMIT $2) AS first`,
		[]any{slug, limit}, &n, &next, &more)
	if err != nil {
		return store.WorkspaceQueue{}, err
	}
	out := store.WorkspaceQueue{Pending: n, Complete: !more}
	if next != nil {
		out.NextDue = next.UTC()
	}
	return out, nil
}
