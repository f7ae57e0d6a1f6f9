package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// store.Bulk: a batch of users checked in one statement and written with
// COPY, and the inputs of a user's claims read in one statement.

var _ store.Bulk = (*tx)(nil)

// userKeysTakenSQL returns the positions (1-based, as WITH ORDINALITY
// counts) of the folded usernames $2 and of the folded emails $3 that
// belong to a user of workspace $1, each a probe of its unique index, and
// whether the workspace exists.
const userKeysTakenSQL = `SELECT
	ARRAY(SELECT n.i FROM unnest($2::text[]) WITH ORDINALITY AS n(fold, i)
		WHERE EXISTS (SELECT 1 FROM users u WHERE u.workspace = $1 AND u.username_fold = n.fold)),
	ARRAY(SELECT n.i FROM unnest($3::text[]) WITH ORDINALITY AS n(fold, i)
		WHERE EXISTS (SELECT 1 FROM users u WHERE u.workspace = $1 AND u.email_fold = n.fold)),
	EXISTS (SELECT 1 FROM workspaces WHERE slug = $1)`

// UserKeysTaken implements store.Bulk in one statement. A value whose Fold
// text cannot hold is taken by no user (PutUser stores none); it goes to
// the server as NULL, which equals nothing.
func (t *tx) UserKeysTaken(slug string, usernames, emails []string) ([]bool, []bool, error) {
	if !storable(slug) {
		return nil, nil, notFound("workspace %q", slug)
	}
	fold := func(values []string) []*string {
		out := make([]*string, len(values))
		for i, v := range values {
			if f := store.Fold(v); storable(f) {
				out[i] = &f
			}
		}
		return out
	}
	var usernameAt, emailAt []int64
	var exists bool
	if _, err := t.queryRow(userKeysTakenSQL, []any{slug, fold(usernames), fold(emails)}, &usernameAt, &emailAt, &exists); err != nil {
		return nil, nil, err
	}
	if !exists {
		return nil, nil, notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	taken := func(n int, at []int64) []bool {
		out := make([]bool, n)
		for _, i := range at {
			out[i-1] = true
		}
		return out
	}
	return taken(len(usernames), usernameAt), taken(len(emails), emailAt), nil
}

// The columns InsertUsers copies, in the order of the rows it copies.
var (
	copyUserColumns = []string{"workspace", "id", "username", "email", "full_name", "username_fold", "email_fold",
		"full_name_fold", "email_verified", "enabled", "mfa_enabled", "password_hash", "created_at", "updated_at", "version"}
	copyAttributeColumns = []string{"workspace", "user_id", "key", "value"}
	copyRoleColumns      = []string{"workspace", "user_id", "role_id"}
	copyMemberColumns    = []string{"workspace", "group_id", "user_id"}
	copyFactorColumns    = []string{"workspace", "user_id", "secret", "confirmed", "created_at", "confirmed_at",
		"last_step", "recovery_codes"}
)

// InsertUsers implements store.Bulk with one COPY per table that gets
// rows: users, user_attributes, user_roles, group_members and
// second_factors (each a round trip to learn the columns' types and the
// COPY's own). The unique indexes refuse a taken id, username or email
// (store.ErrConflict) and the foreign keys a missing workspace
// (store.ErrNotFound); either fails the transaction. The new users are
// counted into user_chunks at the commit, as PutUser counts them. The
// holders their roles and memberships make, and the counts of those roles
// and groups, are written by one statement (insertHoldersSQL) deferred to
// the next statement or the COMMIT. Like PutUser, it refuses a username,
// email or full name that PostgreSQL text cannot hold, before it writes.
func (t *tx) InsertUsers(slug string, users []store.UserInsert) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if len(users) == 0 {
		return t.requireWorkspace(slug)
	}
	for _, in := range users {
		u := in.User
		if err := checkText("username", u.Username, "email", u.Email, "full name", u.FullName); err != nil {
			return err
		}
	}
	if err := t.requireWorkspace(slug); err != nil {
		return err
	}
	err := t.copy("users", copyUserColumns, len(users), func(i int, row []any) {
		u := users[i].User
		row[0], row[1], row[2], row[3], row[4] = slug, u.ID, u.Username, u.Email, u.FullName
		row[5], row[6], row[7] = store.Fold(u.Username), store.Fold(u.Email), store.Fold(u.FullName)
		row[8], row[9], row[10], row[11] = u.EmailVerified, u.Enabled, u.MFAEnabled, []byte(u.PasswordHash)
		row[12], row[13], row[14] = ts(u.CreatedAt), ts(u.UpdatedAt), u.Version
	})
	if err != nil {
		return err
	}
	for _, in := range users {
		t.countUser(slug, in.User.ID>>chunkBits, 1)
	}

	var attrs [][]any
	var roles [][]any
	var members [][]any
	var factors [][]any
	var holding []int64 // the users with roles or groups
	for _, in := range users {
		id := in.User.ID
		for key, value := range in.Attributes {
			attrs = append(attrs, []any{slug, id, bin([]byte(key)), bin([]byte(value))})
		}
		seen := make(map[int64]bool, len(in.Roles))
		for _, role := range in.Roles {
			if !seen[role] {
				seen[role] = true
				roles = append(roles, []any{slug, id, role})
			}
		}
		clear(seen)
		for _, group := range in.Groups {
			if !seen[group] {
				seen[group] = true
				members = append(members, []any{slug, group, id})
			}
		}
		if len(in.Roles) > 0 || len(in.Groups) > 0 {
			holding = append(holding, id)
		}
		if f := in.SecondFactor; f != nil {
			codes := make([][]byte, len(f.RecoveryCodes)) // never nil, nor an element: the column is NOT NULL
			for i, c := range f.RecoveryCodes {
				codes[i] = bin(c)
			}
			factors = append(factors, []any{slug, f.UserID, bin(f.Secret), f.Confirmed, ts(f.CreatedAt), ts(f.ConfirmedAt),
				f.LastStep, codes})
		}
	}
	for _, c := range []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"user_attributes", copyAttributeColumns, attrs},
		{"user_roles", copyRoleColumns, roles},
		{"group_members", copyMemberColumns, members},
		{"second_factors", copyFactorColumns, factors},
	} {
		rows := c.rows
		if err := t.copy(c.table, c.columns, len(rows), func(i int, row []any) { copy(row, rows[i]) }); err != nil {
			return err
		}
	}
	if len(holding) == 0 {
		return nil
	}
	// It cannot fail but with the transaction: the users are new, so no
	// holder row of theirs exists (holders are deleted with their user),
	// and it only adds to counts.
	return t.deferWrite(insertHoldersSQL, slug, holding, t.shard)
}

// insertHoldersSQL writes the holders of the new users $2 of workspace
// $1, whose direct roles and memberships are written: for each role they
// hold, directly or through one of their groups, a row whose refs counts
// those reasons, and the counts of the roles and of the groups, in shard
// $3.
var insertHoldersSQL = `WITH reasons AS (
	SELECT role_id, user_id FROM user_roles WHERE workspace = $1 AND user_id = ANY ($2::bigint[])
	UNION ALL
	SELECT r.role_id, m.user_id FROM group_members m
	JOIN group_roles r ON r.workspace = m.workspace AND r.group_id = m.group_id
	WHERE m.workspace = $1 AND m.user_id = ANY ($2::bigint[])
), held AS (
	INSERT INTO role_holders (workspace, role_id, user_id, refs)
	SELECT $1::text, role_id, user_id, count(*) FROM reasons GROUP BY role_id, user_id
	RETURNING role_id
), ` + countCTE("counted", "role_counts", "role_id", "SELECT role_id, count(*) FROM held GROUP BY role_id", "$3") + `
INSERT INTO group_counts AS c (workspace, group_id, shard, n)
SELECT $1::text, group_id, $3::smallint, count(*) FROM group_members
WHERE workspace = $1 AND user_id = ANY ($2::bigint[]) GROUP BY group_id
ON CONFLICT (workspace, group_id, shard) DO UPDATE SET n = c.n + excluded.n`

// copy copies n rows into table with COPY, unless n is 0. fill writes the
// values of row i, one per column, into row, which it may not keep.
func (t *tx) copy(table string, columns []string, n int, fill func(i int, row []any)) error {
	if n == 0 {
		return nil
	}
	if err := t.sendPending(); err != nil {
		return err
	}
	row := make([]any, len(columns))
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		clear(row)
		fill(i, row)
		i++
		return row, nil
	})
	t.sent++
	copied, err := t.conn.CopyFrom(t.ctx, pgx.Identifier{table}, columns, src)
	if err != nil {
		return t.fail(err)
	}
	if copied != int64(n) {
		return t.fail(fmt.Errorf("COPY %s: %d rows copied of %d", table, copied, n))
	}
	return nil
}

// UserWithClaimInputs implements store.Bulk with the three statements of
// User, UserAttributes and ClaimMappers sent at once, in one round trip
// (with the BEGIN, when they are the transaction's first): three index
// scans in the transaction's snapshot. It does not tell a missing
// workspace from a missing user: both are store.ErrNotFound, without the
// second round trip that would tell.
func (t *tx) UserWithClaimInputs(slug string, id int64) (store.User, map[string]string, []store.ClaimMapper, error) {
	if !storable(slug) {
		return store.User{}, nil, nil, notFound("workspace %q", slug)
	}
	b := &pgx.Batch{}
	read := queueUserWithAttributes(b, slug, id)
	var mappers []store.ClaimMapper
	b.Queue(claimMappersSQL, slug).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			m, err := scanClaimMapper(rows)
			if err != nil {
				return err
			}
			mappers = append(mappers, m)
		}
		return rows.Err()
	})
	if err := t.sendBatch(b); err != nil {
		return store.User{}, nil, nil, err
	}
	if !read.found {
		return store.User{}, nil, nil, notFound("user %d of workspace %q", id, slug)
	}
	t.knowSpace(slug)
	t.knowUser(slug, id)
	return read.user, read.attrs, mappers, nil
}

// UserWithAttributes implements store.Bulk with the statements of User
// and UserAttributes sent at once, in one round trip, as
// UserWithClaimInputs sends its three. SetAttribute reads both before it
// writes, so a write costs a round trip less.
func (t *tx) UserWithAttributes(slug string, id int64) (store.User, map[string]string, error) {
	if !storable(slug) {
		return store.User{}, nil, notFound("workspace %q", slug)
	}
	b := &pgx.Batch{}
	read := queueUserWithAttributes(b, slug, id)
	if err := t.sendBatch(b); err != nil {
		return store.User{}, nil, err
	}
	if !read.found {
		return store.User{}, nil, notFound("user %d of workspace %q", id, slug)
	}
	t.knowSpace(slug)
	t.knowUser(slug, id)
	return read.user, read.attrs, nil
}

// userWithAttributes is what the statements queueUserWithAttributes
// queues read, once the batch has been sent.
type userWithAttributes struct {
	user  store.User
	found bool
	attrs map[string]string // never nil
}

// queueUserWithAttributes queues on b the statements of User and
// UserAttributes, which fill in what it returns when b is sent.
func queueUserWithAttributes(b *pgx.Batch, slug string, id int64) *userWithAttributes {
	read := &userWithAttributes{attrs: map[string]string{}}
	b.Queue("SELECT "+userColumns+" FROM users WHERE workspace = $1 AND id = $2", slug, id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var err error
			if read.user, err = scanUser(rows); err != nil {
				return err
			}
			read.found = true
		}
		return rows.Err()
	})
	b.Queue(userAttributesSQL, slug, id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			k, v, err := scanAttribute(rows)
			if err != nil {
				return err
			}
			read.attrs[k] = v
		}
		return rows.Err()
	})
	return read
}

// userAccessSQL reads what user $2 of workspace $1 holds, in one
// statement of rows tagged by kind: the user (found at all), its direct
// roles, its groups' records, their roles, and the records of every role
// among them. A group or role without a record (a store checks no
// reference) has none to read and is left out.
const userAccessSQL = `WITH d AS (
	SELECT role_id FROM user_roles WHERE workspace = $1 AND user_id = $2
), g AS (
	SELECT x.id, x.name, x.description, x.created_at, x.updated_at, x.version
	FROM group_members m JOIN groups x ON x.workspace = m.workspace AND x.id = m.group_id
	WHERE m.workspace = $1 AND m.user_id = $2
), gr AS (
	SELECT group_id, role_id FROM group_roles WHERE workspace = $1 AND group_id IN (SELECT id FROM g)
)
SELECT 0 AS kind, id, 0::bigint AS of, ''::text AS name, ''::text AS description,
	'0001-01-01 00:00:00+00'::timestamptz AS created_at, '0001-01-01 00:00:00+00'::timestamptz AS updated_at,
	0::bigint AS version
FROM users WHERE workspace = $1 AND id = $2
UNION ALL SELECT 1, role_id, 0, '', '', '0001-01-01 00:00:00+00', '0001-01-01 00:00:00+00', 0 FROM d
UNION ALL SELECT 2, id, 0, name, description, created_at, updated_at, version FROM g
UNION ALL SELECT 3, group_id, role_id, '', '', '0001-01-01 00:00:00+00', '0001-01-01 00:00:00+00', 0 FROM gr
UNION ALL SELECT 4, id, 0, name, description, created_at, updated_at, version FROM roles
	WHERE workspace = $1 AND id IN (SELECT role_id FROM d UNION SELECT role_id FROM gr)
ORDER BY kind, id, of`

// The kinds of the rows of userAccessSQL.
const (
	accessUser = iota
	accessDirect
	accessGroup
	accessGroupRole
	accessRole
)

// UserAccess implements store.Bulk in one statement (userAccessSQL): an
// index scan of the user's direct roles, one of its memberships (by
// user), and a probe of the primary keys for each group, group role and
// role record. Like UserWithClaimInputs, it does not tell a missing
// workspace from a missing user: both are store.ErrNotFound.
func (t *tx) UserAccess(slug string, id int64) (store.UserAccess, error) {
	if !storable(slug) {
		return store.UserAccess{}, notFound("workspace %q", slug)
	}
	type row struct {
		kind int
		of   int64
		rec  store.Role // the id, and a record's fields
	}
	rows, err := collect(t, userAccessSQL, []any{slug, id}, func(r pgx.Rows) (x row, err error) {
		err = r.Scan(&x.kind, &x.rec.ID, &x.of, &x.rec.Name, &x.rec.Description, &x.rec.CreatedAt, &x.rec.UpdatedAt,
			&x.rec.Version)
		return x, err
	})
	if err != nil {
		return store.UserAccess{}, err
	}
	if len(rows) == 0 || rows[0].kind != accessUser {
		return store.UserAccess{}, notFound("user %d of workspace %q", id, slug)
	}
	t.knowSpace(slug)
	t.knowUser(slug, id)
	a := store.UserAccess{GroupRoles: map[int64][]int64{}}
	for _, x := range rows[1:] { // in order of kind, then of id: every list ascending
		switch x.kind {
		case accessDirect:
			a.Direct = append(a.Direct, x.rec.ID)
		case accessGroup:
			a.Groups = append(a.Groups, store.Group(x.rec))
		case accessGroupRole:
			a.GroupRoles[x.rec.ID] = append(a.GroupRoles[x.rec.ID], x.of)
		case accessRole:
			a.Roles = append(a.Roles, x.rec)
		}
	}
	return a, nil
}
