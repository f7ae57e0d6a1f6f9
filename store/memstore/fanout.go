package memstore

import (
	"slices"

	"github.com/identitylib/identity/store"
)

// WebhooksForEvent implements store.Tx. memstore is built for tests: it
// scans the workspace's endpoints instead of keeping an index by event
// type as the durable stores do.
func (t *tx) WebhooksForEvent(slug, eventType string) ([]store.Webhook, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	var out []store.Webhook
	for _, id := range n.hookIDs {
		if w := n.hooks[id]; slices.Contains(w.Events, eventType) {
			out = append(out, copyWebhook(w))
		}
	}
	return out, nil
}
