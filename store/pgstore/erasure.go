package pgstore

// Permanent deletion. Every table names its workspace with a foreign key
// that cascades, and user_roles and user_attributes name their user the
// same way, so deleting a workspace's row or a user's row takes those
// with it; the other records of a user name it without a foreign key (the
// store contract lets them name any id) and are deleted through their
// indexes by user: sessions_user, grants_user, verification_tokens_user,
// auth_requests_user, deliveries_user, and refresh_tokens_grant for the
// refresh tokens of the user's grants.

// deleteUserSQL deletes a user and every record kept under its id in one
// statement. All CTEs see the same snapshot, and each deletes only once
// the user's row is found, so an unknown user deletes nothing. The
// literal user_id <> 0 lets the partial indexes serve the statement.
const deleteUserSQL = `WITH u AS (
	DELETE FROM users WHERE workspace = $1 AND id = $2 RETURNING id >> 10 AS chunk
), g AS (
	DELETE FROM grants WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u) RETURNING id
), rt AS (
	DELETE FROM refresh_tokens WHERE workspace = $1 AND grant_id IN (SELECT id FROM g)
), s AS (
	DELETE FROM sessions WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
), ar AS (
	DELETE FROM auth_requests WHERE workspace = $1 AND user_id = $2 AND user_id <> 0 AND EXISTS (SELECT 1 FROM u)
), vt AS (
	DELETE FROM verification_tokens WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
), la AS (
	DELETE FROM login_attempts WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
), sf AS (
	DELETE FROM second_factors WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
), mail AS (
	DELETE FROM deliveries WHERE workspace = $1 AND kind = 'mail' AND user_id = $2 AND user_id <> 0
		AND EXISTS (SELECT 1 FROM u)
)
SELECT chunk FROM u`

// DeleteUser implements store.Tx in one statement (deleteUserSQL). The
// user's chunk loses the user in user_chunks when the transaction
// commits, as an inserted user's gains it (see tx.commit).
func (t *tx) DeleteUser(slug string, id int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var chunk int64
	found, err := t.queryRow(deleteUserSQL, []any{slug, id}, &chunk)
	if err != nil {
		return err
	}
	if !found {
		return t.missing(slug, "user %d", id)
	}
	t.countUser(slug, chunk, -1)
	delete(t.users, userRef{slug, id})
	return nil
}

// DeleteWorkspace implements store.Tx: deleting the workspace's row
// cascades to every row of the workspace, its API keys included, and
// the due index loses its pending jobs with them. The transaction
// forgets what it kept of the workspace (its sequences, its user count
// changes, the users it read), which would otherwise be written to rows
// that are gone.
func (t *tx) DeleteWorkspace(slug string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec("DELETE FROM workspaces WHERE slug = $1", slug)
	if err := deleted(tag, err, "workspace %q", slug); err != nil {
		return err
	}
	delete(t.spaces, slug)
	delete(t.newUsers, slug)
	for u := range t.users {
		if u.slug == slug {
			delete(t.users, u)
		}
	}
	for k := range t.seqs {
		if k.slug == slug {
			delete(t.seqs, k)
		}
	}
	return nil
}
