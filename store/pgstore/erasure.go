package pgstore

// Permanent deletion. Every table but two names its workspace with a
// foreign key that cascades; user_roles, user_attributes and
// group_members name their user the same way (and through it their
// workspace), so deleting a workspace's row or a user's row takes those
// with it. The other records of a user name it without a foreign key (the
// store contract lets them name any id) and are deleted through their
// indexes by user: sessions_user, grants_user, verification_tokens_user,
// auth_requests_user, deliveries_user, passkeys_user, the primary
// key of passkey_handles, and refresh_tokens_grant for the
// refresh tokens of the user's grants.
//
// role_holders has no foreign key at all (see migration 0011): DeleteUser
// deletes the user's holder rows, found by the primary key through the
// roles the user holds (its direct roles and its groups' roles), and
// DeleteWorkspace deletes the workspace's. DeleteUser deletes the user's
// memberships itself too, rather than leave them to the cascade, so that
// the counts of the user's groups and roles lose the user in the same
// statement.

// deleteUserSQL deletes a user and every record kept under its id in one
// statement. All CTEs see the same snapshot, and each deletes only once
// the user's row is found, so an unknown user deletes nothing. The
// literal user_id <> 0 lets the partial indexes serve the statement. The
// counts of the user's groups and roles lose the user in shard $3.
var deleteUserSQL = `WITH u AS (
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
), pk AS (
	DELETE FROM passkeys WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
), ph AS (
	DELETE FROM passkey_handles WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
), mail AS (
	DELETE FROM deliveries WHERE workspace = $1 AND kind = 'mail' AND user_id = $2 AND user_id <> 0
		AND EXISTS (SELECT 1 FROM u)
), gm AS (
	DELETE FROM group_members WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u) RETURNING group_id
), ` + countCTE("gc", "group_counts", "group_id", "SELECT group_id, -1 FROM gm", "$3") + `, held AS (
	SELECT role_id FROM user_roles WHERE workspace = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM u)
	UNION
	SELECT role_id FROM group_roles WHERE workspace = $1 AND group_id IN (SELECT group_id FROM gm)
), h AS (
	DELETE FROM role_holders WHERE workspace = $1 AND user_id = $2 AND role_id IN (SELECT role_id FROM held)
	RETURNING role_id
), ` + countCTE("hc", "role_counts", "role_id", "SELECT role_id, -1 FROM h", "$3") + `
SELECT chunk FROM u`

// DeleteUser implements store.Tx in one statement (deleteUserSQL). The
// user's chunk loses the user in user_chunks when the transaction
// commits, as an inserted user's gains it (see tx.commit).
func (t *tx) DeleteUser(slug string, id int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var chunk int64
	found, err := t.queryRow(deleteUserSQL, []any{slug, id, t.shard}, &chunk)
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
// the due index loses its pending jobs with them; the same statement
// deletes the workspace's role_holders, which have no foreign key. The
// transaction forgets what it kept of the workspace (its sequences, its
// user count changes, the users it read), which would otherwise be
// written to rows that are gone.
func (t *tx) DeleteWorkspace(slug string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec(`WITH h AS (DELETE FROM role_holders WHERE workspace = $1)
		DELETE FROM workspaces WHERE slug = $1`, slug)
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
