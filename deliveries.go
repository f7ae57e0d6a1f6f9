package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/identitylib/identity/store"
)

// DeliveryStatus is the state of a delivery.
type DeliveryStatus string

// The delivery states.
const (
	// DeliveryPending: waiting for its next attempt (or in one).
	DeliveryPending DeliveryStatus = "pending"
	// DeliverySucceeded: a 2xx response was received.
	DeliverySucceeded DeliveryStatus = "succeeded"
	// DeliveryFailed: every attempt of the schedule failed, or the
	// endpoint was disabled first. Kept for inspection; RetryDelivery
	// queues it again.
	DeliveryFailed DeliveryStatus = "failed"
)

// Delivery is one event for one webhook endpoint, with the record of its
// attempts. The payload is not part of it.
type Delivery struct {
	ID         int64 `json:"id"`
	EndpointID int64 `json:"endpointId"`
	// EventID is the webhook-id header of every attempt, shared by the
	// deliveries of one event to several endpoints.
	EventID   string         `json:"eventId"`
	EventType EventType      `json:"eventType"`
	Status    DeliveryStatus `json:"status"`
	// Attempts counts the attempts made, since the delivery was created or
	// last queued again by RetryDelivery.
	Attempts int `json:"attempts"`
	// LastStatus is the HTTP status of the last attempt, 0 when none was
	// received (a timeout, a refused connection, ...).
	LastStatus int `json:"lastStatus"`
	// LastError says why the last attempt failed, or why the delivery was
	// failed ("endpoint disabled"); empty after a success.
	LastError     string    `json:"lastError"`
	LastAttemptAt time.Time `json:"lastAttemptAt,omitzero"`
	// UserID is, for an email job (see ListEmailJobs), the user it is for; 0
	// for webhook deliveries.
	UserID int64 `json:"userId,omitempty"`
	// NextAttemptAt is when a pending delivery is next due; zero once it
	// succeeded or failed.
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero"`
	CreatedAt     time.Time `json:"createdAt"`
}

func deliveryFromRecord(r store.Delivery) Delivery {
	out := Delivery{
		ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, EventType: EventType(r.EventType),
		Status: DeliveryStatus(r.Status), Attempts: r.Attempts, LastStatus: r.LastStatus,
		LastError: r.LastError, LastAttemptAt: r.LastAttemptAt, CreatedAt: r.CreatedAt,
	}
	if r.Status == store.DeliveryPending {
		out.NextAttemptAt = r.NextAttemptAt
	}
	if r.Kind == store.JobMail {
		var job emailJob
		if json.Unmarshal(r.Payload, &job) == nil {
			out.UserID = job.UserID
		}
	}
	return out
}

// ListDeliveries returns one page of the endpoint's deliveries, pending,
// succeeded and failed, in ascending id order, with their number in all
// (those Sweep has not removed yet; see Retention). A nil page is the
// first DefaultPageLimit (20); an invalid page is a CodeInvalid error on
// "offset" or "limit" (see Page). An unknown endpoint is a not-found
// error. A page costs what it returns: the store reads no record it
// skips.
func (w *Workspace) ListDeliveries(ctx context.Context, endpointID int64, page *Page) (List[Delivery], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[Delivery]{}, err
	}
	var recs []store.Delivery
	var total int
	err = w.view(ctx, func(tx store.Tx) error {
		if endpointID <= 0 {
			return notFound("webhook endpoint %d not found", endpointID)
		}
		if _, err := tx.Webhook(w.slug, endpointID); err != nil {
			return err
		}
		var err error
		recs, total, err = tx.DeliveriesPage(w.slug, endpointID, pg.Offset, pg.Limit)
		return err
	})
	if err != nil {
		return List[Delivery]{}, fromStore(err, fmt.Sprintf("webhook endpoint %d", endpointID))
	}
	return List[Delivery]{Items: mapAll(recs, deliveryFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}

// GetDelivery returns the delivery with the id, or a not-found error.
func (w *Workspace) GetDelivery(ctx context.Context, id int64) (Delivery, error) {
	var rec store.Delivery
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if id <= 0 {
			return notFound("delivery %d not found", id)
		}
		rec, err = tx.Delivery(w.slug, id)
		return err
	})
	if err != nil {
		return Delivery{}, fromStore(err, fmt.Sprintf("delivery %d", id))
	}
	return deliveryFromRecord(rec), nil
}

// RetryDelivery queues a failed delivery again: it becomes pending and
// due now, and its schedule starts over (Attempts goes back to 0; the last
// attempt's status and error stay until the next attempt). A delivery
// that is pending or succeeded, or whose endpoint is disabled, is a
// CodeConflict error; an unknown delivery is a not-found error. Failed
// email jobs (ListEmailJobs) can be retried too.
func (w *Workspace) RetryDelivery(ctx context.Context, id int64) error {
	now := w.svc.timestamp()
	err := w.update(ctx, func(tx store.Tx) error {
		if id <= 0 {
			return notFound("delivery %d not found", id)
		}
		d, err := tx.Delivery(w.slug, id)
		if err != nil {
			return err
		}
		if err := retryable(tx, w.slug, d); err != nil {
			return err
		}
		d.Status, d.Attempts, d.NextAttemptAt = store.DeliveryPending, 0, now
		d.LeaseUntil, d.LeaseOwner = time.Time{}, ""
		if err := tx.PutDelivery(w.slug, d); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{
			action:  AuditDeliveryRetried,
			target:  AuditTarget{Kind: TargetDelivery, ID: strconv.FormatInt(d.ID, 10), Display: d.EventType},
			changes: auditChanges{}.set("status", string(DeliveryFailed), string(DeliveryPending)),
		})
	})
	return fromStore(err, fmt.Sprintf("delivery %d", id))
}

func retryable(tx store.Tx, slug string, d store.Delivery) error {
	if d.Status != store.DeliveryFailed {
		return errorf(CodeConflict, "delivery %d is %s; only a failed delivery can be retried", d.ID, d.Status)
	}
	if d.Kind == store.JobMail {
		return nil // an email job: no endpoint to be disabled
	}
	hook, err := tx.Webhook(slug, d.EndpointID)
	if err != nil {
		return err
	}
	if !hook.Enabled {
		return errorf(CodeConflict, "webhook endpoint %d is disabled", hook.ID)
	}
	return nil
}
