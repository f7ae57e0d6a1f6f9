package identity

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// eventBody is the JSON body of every webhook request, as the Standard
// Webhooks specification shapes it.
type eventBody struct {
	Type      EventType `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// emit records an event in tx, the transaction of the change that caused
// it (a transactional outbox): one pending delivery for every enabled
// endpoint of the workspace subscribed to the event's type, due now. If the
// change rolls back, so does its event; once it commits, the event is in
// the store for the dispatcher, whatever happens to the process.
func (w *Workspace) emit(tx store.Tx, typ EventType, data any) error {
	subscribed, err := w.subscribers(tx, typ)
	if err != nil || len(subscribed) == 0 {
		return err
	}
	now := w.svc.timestamp()
	payload, err := json.Marshal(eventBody{Type: typ, Timestamp: now, Data: data})
	if err != nil {
		return err
	}
	eventID, err := newEventID()
	if err != nil {
		return err
	}
	for _, h := range subscribed {
		id, err := tx.NextID(w.slug, store.SeqDeliveries)
		if err != nil {
			return err
		}
		err = tx.PutDelivery(w.slug, store.Delivery{
			ID: id, Kind: store.JobWebhook, EndpointID: h.ID, EventID: eventID, EventType: string(typ), Payload: payload,
			CreatedAt: now, Status: store.DeliveryPending, NextAttemptAt: now,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// subscribers returns the enabled endpoints subscribed to typ, read
// through the store's index by event type: an event costs what its
// subscribers cost, however many endpoints subscribe to other events.
func (w *Workspace) subscribers(tx store.Tx, typ EventType) ([]store.Webhook, error) {
	hooks, err := tx.WebhooksForEvent(w.slug, string(typ))
	if err != nil {
		return nil, err
	}
	var subscribed []store.Webhook
	for _, h := range hooks {
		if h.Enabled && slices.Contains(h.Events, string(typ)) {
			subscribed = append(subscribed, h)
		}
	}
	return subscribed, nil
}

// newEventID returns "msg_" and 22 characters of base64url: 128 random
// bits, the webhook-id of every delivery of one event.
func newEventID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "msg_" + base64.RawURLEncoding.EncodeToString(b), nil
}
