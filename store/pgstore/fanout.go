package pgstore

import (
	"github.com/identitylib/identity/store"
)

// WebhooksForEvent implements store.Tx through the GIN index on events of
// migration 0009 (events @> ARRAY[type]).
func (t *tx) WebhooksForEvent(slug, eventType string) ([]store.Webhook, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	if !storable(eventType) {
		return nil, t.emptyResult(slug)
	}
	return listRows(t, slug, `SELECT `+webhookColumns+` FROM webhooks WHERE workspace = $1 AND events @> ARRAY[$2::text] ORDER BY id`,
		[]any{slug, eventType}, scanWebhook)
}
