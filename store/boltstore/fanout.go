package boltstore

import (
	"bytes"
	"fmt"

	"github.com/identitylib/identity/store"
)

// The endpoints by event type: webhook_events holds, for every endpoint
// and every event type in its Events, the key uvarint length + event type
// + endpoint id key. PutWebhook and DeleteWebhook move an endpoint's
// entries in the transaction that writes it, so WebhooksForEvent reads
// the endpoints of one event type with a prefix scan.

// webhookEventKey returns the webhook_events key of the endpoint (its id
// key k) for the event type.
func webhookEventKey(eventType string, k []byte) []byte {
	return append(appendString(nil, eventType), k...)
}

// moveWebhookEvents makes webhook_events list the endpoint with the id key
// k under the event types next instead of those of prev, the record
// stored before this write (nil if none).
func (sp *space) moveWebhookEvents(k, prev []byte, next []string) error {
	index := sp.bucket(bucketWebhookEvents)
	if prev != nil {
		old, err := decodeWebhook(k, prev)
		if err != nil {
			return err
		}
		for _, e := range old.Events {
			if err := index.Delete(webhookEventKey(e, k)); err != nil {
				return err
			}
		}
	}
	for _, e := range next {
		if err := index.Put(webhookEventKey(e, k), nil); err != nil {
			return err
		}
	}
	return nil
}

// WebhooksForEvent implements store.Tx: a prefix scan of webhook_events,
// whose keys order an event type's endpoints by id.
func (t *tx) WebhooksForEvent(slug, eventType string) ([]store.Webhook, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	hooks, prefix := sp.bucket(bucketWebhooks), appendString(nil, eventType)
	var out []store.Webhook
	c := sp.bucket(bucketWebhookEvents).Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		idk := k[len(prefix):]
		v := hooks.Get(idk)
		if v == nil {
			return nil, fmt.Errorf("boltstore: webhook_events names webhook %d, which does not exist", decodeID(idk))
		}
		w, err := decodeWebhook(idk, v)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}
