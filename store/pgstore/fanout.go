package pgstore

import (
	"github.com/jackc/pgx/v5"

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
	hooks, err := collect(t, `SELECT `+webhookColumns+` FROM webhooks WHERE workspace = $1 AND events @> ARRAY[$2::text] ORDER BY id`,
		[]any{slug, eventType}, func(r pgx.Rows) (store.Webhook, error) {
			var w store.Webhook
			err := r.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.CreatedAt, &w.Secret, &w.FailingSince, &w.Version)
			return w, err
		})
	if err != nil {
		return nil, err
	}
	if len(hooks) == 0 {
		return nil, t.emptyResult(slug)
	}
	return hooks, nil
}
