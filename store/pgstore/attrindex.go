package pgstore

import (
	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// attrMatch selects the attributes of workspace $1 with key $2 and value
// $3 through the index of migration 0010, on (workspace, key,
// sha256(value), user_id); the value itself is compared as well, so that
// the match is exact whatever the hash.
const attrMatch = `workspace = $1 AND key = $2::bytea AND sha256(value) = sha256($3::bytea) AND value = $3::bytea`

// usersByAttributeSQL reads one page of the users with the attribute
// value, in id order, each row with the number of them in all: the page
// walks the index from the offset on, the count along the index.
const usersByAttributeSQL = `SELECT ` + userColumns + `,
	(SELECT count(*) FROM user_attributes WHERE ` + attrMatch + `)
FROM users
WHERE workspace = $1 AND id IN (
	SELECT user_id FROM user_attributes WHERE ` + attrMatch + ` ORDER BY user_id OFFSET $4 LIMIT $5)
ORDER BY id`

// UsersByAttribute implements store.Tx. A page of users comes with the
// total in one round trip; only an empty page (past the end, or no user
// with the value) costs a second query, for the total and whether the
// workspace exists. The total counts the matching index entries, so it
// costs in proportion to the users with the value, not to the
// workspace's users.
func (t *tx) UsersByAttribute(slug string, q store.AttributeQuery) ([]store.User, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	offset, limit := max(q.Offset, 0), max(q.Limit, 0)
	key, value := bin([]byte(q.Key)), bin([]byte(q.Value))
	var users []store.User
	var total int64
	if limit > 0 {
		var err error
		users, err = collect(t, usersByAttributeSQL, []any{slug, key, value, offset, limit},
			func(r pgx.Rows) (store.User, error) { return scanUser(r, &total) })
		if err != nil {
			return nil, 0, err
		}
	}
	if len(users) == 0 {
		var exists bool
		_, err := t.queryRow(`SELECT (SELECT count(*) FROM user_attributes WHERE `+attrMatch+`),
			EXISTS (SELECT 1 FROM workspaces WHERE slug = $1)`, []any{slug, key, value}, &total, &exists)
		if err != nil {
			return nil, 0, err
		}
		if !exists {
			return nil, 0, notFound("workspace %q", slug)
		}
		t.knowSpace(slug)
	}
	return users, int(total), nil
}
