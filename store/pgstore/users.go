package pgstore

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// Workspaces.

// PutWorkspace implements store.Tx.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := checkText("workspace slug", w.Slug); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO workspaces (slug, created_at, settings) VALUES ($1, $2, $3)
		ON CONFLICT (slug) DO UPDATE SET created_at = excluded.created_at, settings = excluded.settings`,
		w.Slug, ts(w.CreatedAt), bin(w.Settings))
	if err != nil {
		return err
	}
	t.knowSpace(w.Slug)
	return nil
}

// Workspace implements store.Tx.
func (t *tx) Workspace(slug string) (store.Workspace, error) {
	w := store.Workspace{Slug: slug}
	if !storable(slug) {
		return w, notFound("workspace %q", slug)
	}
	found, err := t.queryRow("SELECT created_at, settings FROM workspaces WHERE slug = $1", []any{slug}, &w.CreatedAt, &w.Settings)
	if err != nil {
		return store.Workspace{}, err
	}
	if !found {
		return store.Workspace{}, notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	return w, nil
}

// Workspaces implements store.Tx.
func (t *tx) Workspaces() ([]store.Workspace, error) {
	return collect(t, "SELECT slug, created_at, settings FROM workspaces ORDER BY slug", nil,
		func(r pgx.Rows) (w store.Workspace, err error) {
			err = r.Scan(&w.Slug, &w.CreatedAt, &w.Settings)
			return w, err
		})
}

// NextID implements store.Tx with a counter row per workspace and
// sequence, updated in the transaction: a rolled-back transaction hands
// its ids out again, and none is handed out twice. The first draw of a
// transaction updates the row, which locks it until the commit; later
// draws count on in memory, and the last value is written before the
// commit. Transactions that draw from the same counter commit one at a
// time; see the package documentation.
func (t *tx) NextID(slug string, seq store.Sequence) (int64, error) {
	if !storable(slug) {
		return 0, notFound("workspace %q", slug)
	}
	if err := checkText("sequence", string(seq)); err != nil {
		return 0, err
	}
	k := seqKey{slug, seq}
	if d := t.seqs[k]; d != nil {
		d.last++
		d.written = false
		return d.last, nil
	}
	var id int64
	found, err := t.queryRow(`INSERT INTO sequences AS s (workspace, name, value)
		SELECT slug, $2, 1 FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, name) DO UPDATE SET value = s.value + 1
		RETURNING value`, []any{slug, string(seq)}, &id)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	if t.seqs == nil {
		t.seqs = make(map[seqKey]*seqDraw)
	}
	t.seqs[k] = &seqDraw{last: id, written: true}
	return id, nil
}

// Users.

// userColumns are the columns scanUser reads, in its order.
const userColumns = `id, username, email, full_name, email_verified, enabled, mfa_enabled,
	password_hash, created_at, updated_at, version`

// scanUser reads a row of userColumns, followed by the columns that tail
// point to.
func scanUser(r pgx.Row, tail ...any) (store.User, error) {
	var u store.User
	var hash []byte
	err := r.Scan(append([]any{&u.ID, &u.Username, &u.Email, &u.FullName, &u.EmailVerified, &u.Enabled, &u.MFAEnabled,
		&hash, &u.CreatedAt, &u.UpdatedAt, &u.Version}, tail...)...)
	u.PasswordHash = string(hash)
	return u, err
}

// putUserSQL writes a user unless its folded username or email belongs to
// another user, or the workspace does not exist, in one statement that
// cannot fail for either reason, and reports which happened, and whether
// the user existed before. All CTEs of a statement see the same snapshot,
// so conflict and existing read the table as it was before the write.
const putUserSQL = `WITH existing AS (
	SELECT 1 FROM users WHERE workspace = $1 AND id = $2
), conflict AS (
	SELECT 1 FROM users
	WHERE workspace = $1 AND id <> $2 AND (username_fold = $6 OR email_fold = $7)
	LIMIT 1
), written AS (
	INSERT INTO users (workspace, id, username, email, full_name, username_fold, email_fold,
		full_name_fold, email_verified, enabled, mfa_enabled, password_hash, created_at, updated_at, version)
	SELECT slug, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::text,
		$8::text, $9::boolean, $10::boolean, $11::boolean, $12::bytea, $13::timestamptz, $14::timestamptz, $15::bigint
	FROM workspaces
	WHERE slug = $1 AND NOT EXISTS (SELECT 1 FROM conflict)
	ON CONFLICT (workspace, id) DO UPDATE SET
		username = excluded.username, email = excluded.email, full_name = excluded.full_name,
		username_fold = excluded.username_fold, email_fold = excluded.email_fold,
		full_name_fold = excluded.full_name_fold, email_verified = excluded.email_verified,
		enabled = excluded.enabled, mfa_enabled = excluded.mfa_enabled,
		password_hash = excluded.password_hash, created_at = excluded.created_at,
		updated_at = excluded.updated_at, version = excluded.version
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM conflict), EXISTS (SELECT 1 FROM written), EXISTS (SELECT 1 FROM existing)`

// PutUser implements store.Tx. It refuses a username, email or full name
// that PostgreSQL text cannot hold (see the package documentation).
func (t *tx) PutUser(slug string, u store.User) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("username", u.Username, "email", u.Email, "full name", u.FullName); err != nil {
		return err
	}
	var conflict, written, existed bool
	_, err := t.queryRow(putUserSQL, []any{
		slug, u.ID, u.Username, u.Email, u.FullName,
		store.Fold(u.Username), store.Fold(u.Email), store.Fold(u.FullName),
		u.EmailVerified, u.Enabled, u.MFAEnabled, []byte(u.PasswordHash),
		ts(u.CreatedAt), ts(u.UpdatedAt), u.Version,
	}, &conflict, &written, &existed)
	switch {
	case err != nil:
		return err
	case conflict:
		return fmt.Errorf("pgstore: user %d: username %q or email %q: %w", u.ID, u.Username, u.Email, store.ErrConflict)
	case !written:
		return notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	if !existed {
		t.countUser(slug, u.ID>>chunkBits, 1)
	}
	return nil
}

// countUser adds delta to the users of the workspace's chunk, for commit
// to write to user_chunks.
func (t *tx) countUser(slug string, chunk, delta int64) {
	if t.newUsers == nil {
		t.newUsers = make(map[string]map[int64]int64)
	}
	if t.newUsers[slug] == nil {
		t.newUsers[slug] = make(map[int64]int64)
	}
	t.newUsers[slug][chunk] += delta
}

// User implements store.Tx.
func (t *tx) User(slug string, id int64) (store.User, error) {
	if !storable(slug) {
		return store.User{}, notFound("workspace %q", slug)
	}
	u, err := getRow(t, slug, t.row("SELECT "+userColumns+" FROM users WHERE workspace = $1 AND id = $2", slug, id),
		func(r pgx.Row) (store.User, error) { return scanUser(r) }, "user %d", id)
	if err == nil {
		t.knowUser(slug, id)
	}
	return u, err
}

// UserIDByUsername implements store.Tx.
func (t *tx) UserIDByUsername(slug, username string) (int64, error) {
	return t.userIDBy(slug, "username_fold", "username", username)
}

// UserIDByEmail implements store.Tx.
func (t *tx) UserIDByEmail(slug, email string) (int64, error) {
	return t.userIDBy(slug, "email_fold", "email", email)
}

// userIDBy looks a user up by the folded column.
func (t *tx) userIDBy(slug, column, what, value string) (int64, error) {
	if !storable(slug) {
		return 0, notFound("workspace %q", slug)
	}
	folded := store.Fold(value)
	if !storable(folded) {
		// PutUser stores no such value.
		return 0, t.missing(slug, "user with %s %q", what, value)
	}
	var id int64
	found, err := t.queryRow("SELECT id FROM users WHERE workspace = $1 AND "+column+" = $2", []any{slug, folded}, &id)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, t.missing(slug, "user with %s %q", what, value)
	}
	return id, nil
}

// Users are counted per chunk of 1<<chunkBits consecutive ids, as
// boltstore counts them.
const chunkBits = 10

// Users implements store.Tx.
//
// Without a prefix, the total is the sum of user_chunks (plus the users
// this transaction inserted). A page near the start comes from the
// primary key; one at a deeper offset starts at the chunk that holds it,
// found from the chunk counts, and steps at most 1023 users into it. With
// a prefix, it collects the ids of the matches from a range scan of each
// folded index (see prefixEnd), counts them and sorts them for the page,
// so it costs in proportion to the matches, like boltstore. The
// collection is a MATERIALIZED CTE so that the plan PostgreSQL caches for
// the statement stays that, whatever the prefix of the first calls.
//
// Except at a deep offset, the total comes with the page, in one round
// trip; only an empty page (past the end, or no match) costs a second
// query for the total.
func (t *tx) Users(slug string, q store.UserQuery) ([]store.User, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	offset, limit := max(q.Offset, 0), max(q.Limit, 0)
	prefix := store.Fold(q.Prefix)
	if !storable(prefix) {
		// No stored folded field holds what text cannot.
		return nil, 0, t.emptyResult(slug)
	}
	if prefix == "" && offset >= 1<<chunkBits {
		return t.usersDeep(slug, offset, limit)
	}

	// match selects the users of workspace $1 that match the prefix: $2
	// to $3, or $2 and up.
	var match, pageSQL, countSQL string
	args := []any{slug}
	switch end, bounded := prefixEnd(prefix); {
	case prefix == "":
		const sum = "(SELECT sum(n)::bigint FROM user_chunks WHERE workspace = $1)"
		pageSQL = "SELECT " + userColumns + ", " + sum + " FROM users WHERE workspace = $1 ORDER BY id OFFSET $2 LIMIT $3"
		countSQL = "SELECT coalesce(" + sum + ", 0)"
	case bounded:
		match = `workspace = $1 AND (username_fold >= $2 AND username_fold < $3
			OR email_fold >= $2 AND email_fold < $3 OR full_name_fold >= $2 AND full_name_fold < $3)`
		args = append(args, prefix, end)
	default:
		// The prefix is all U+10FFFF: no upper bound.
		match = "workspace = $1 AND (username_fold >= $2 OR email_fold >= $2 OR full_name_fold >= $2)"
		args = append(args, prefix)
	}
	if match != "" {
		n := len(args)
		pageSQL = fmt.Sprintf(`WITH m AS MATERIALIZED (SELECT id FROM users WHERE %s),
			p AS (SELECT id FROM m ORDER BY id OFFSET $%d LIMIT $%d)
			SELECT %s, (SELECT count(*) FROM m)
			FROM users WHERE workspace = $1 AND id IN (SELECT id FROM p) ORDER BY id`,
			match, n+1, n+2, userColumns)
		countSQL = "SELECT (SELECT count(*) FROM users WHERE " + match + ")"
	}

	var users []store.User
	var total *int64
	if limit > 0 {
		var err error
		users, err = collect(t, pageSQL, append(args, offset, limit), func(r pgx.Rows) (store.User, error) {
			return scanUser(r, &total)
		})
		if err != nil {
			return nil, 0, err
		}
	}
	if len(users) == 0 {
		// No page to bring the total: count apart, and find out in the
		// same round trip whether the workspace exists.
		var n int64
		var exists bool
		if _, err := t.queryRow(countSQL+", EXISTS (SELECT 1 FROM workspaces WHERE slug = $1)", args, &n, &exists); err != nil {
			return nil, 0, err
		}
		if !exists {
			return nil, 0, notFound("workspace %q", slug)
		}
		t.knowSpace(slug)
		total = &n
	}
	n := 0
	if total != nil { // NULL: no chunk counted yet
		n = int(*total)
	}
	if prefix == "" {
		// user_chunks gains this transaction's users at its commit.
		for _, c := range t.newUsers[slug] {
			n += int(c)
		}
	}
	return users, n, nil
}

// usersDeep reads a page of all users at a deep offset: it reads the chunk
// counts, finds the chunk that holds the offset, and steps into it.
func (t *tx) usersDeep(slug string, offset, limit int) ([]store.User, int, error) {
	type chunk struct{ id, n int64 }
	chunks, err := collect(t, "SELECT chunk, n FROM user_chunks WHERE workspace = $1 ORDER BY chunk", []any{slug},
		func(r pgx.Rows) (c chunk, err error) { return c, r.Scan(&c.id, &c.n) })
	if err != nil {
		return nil, 0, err
	}
	if pending := t.newUsers[slug]; len(pending) > 0 {
		// Add the users this transaction inserted.
		counts := make(map[int64]int64, len(chunks)+len(pending))
		for _, c := range chunks {
			counts[c.id] = c.n
		}
		for id, n := range pending {
			counts[id] += n
		}
		chunks = chunks[:0]
		for _, id := range slices.Sorted(maps.Keys(counts)) {
			chunks = append(chunks, chunk{id, counts[id]})
		}
	}
	total := 0
	for _, c := range chunks {
		total += int(c.n)
	}
	if total == 0 {
		return nil, 0, t.emptyResult(slug)
	}
	if limit == 0 || offset >= total {
		return nil, total, nil
	}
	before := 0
	var start chunk
	for _, c := range chunks {
		if before+int(c.n) > offset {
			start = c
			break
		}
		before += int(c.n)
	}
	users, err := collect(t, "SELECT "+userColumns+" FROM users WHERE workspace = $1 AND id >= $2 ORDER BY id OFFSET $3 LIMIT $4",
		[]any{slug, start.id << chunkBits, offset - before, limit}, func(r pgx.Rows) (store.User, error) { return scanUser(r) })
	if err != nil {
		return nil, 0, err
	}
	return users, total, nil
}

// prefixEnd returns the least string greater than every string that
// starts with p, which must be valid UTF-8: p with its last code point
// below U+10FFFF incremented and what follows it dropped. Byte order of
// UTF-8 is code point order, so s starts with p exactly when p <= s <
// prefixEnd(p) in the "C" collation. It returns false when p is empty or
// all U+10FFFF, which leaves no upper bound.
func prefixEnd(p string) (string, bool) {
	rs := []rune(p)
	for len(rs) > 0 {
		last := rs[len(rs)-1]
		rs = rs[:len(rs)-1]
		if last < utf8.MaxRune {
			next := last + 1
			if next >= 0xD800 && next <= 0xDFFF { // surrogates are no code points of UTF-8
				next = 0xE000
			}
			return string(append(rs, next)), true
		}
	}
	return "", false
}

// Attributes.

// UserAttributes implements store.Tx.
func (t *tx) UserAttributes(slug string, userID int64) (map[string]string, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	type kv struct{ k, v string }
	pairs, err := collect(t, userAttributesSQL, []any{slug, userID}, func(r pgx.Rows) (p kv, err error) {
		p.k, p.v, err = scanAttribute(r)
		return p, err
	})
	if err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		if err := t.emptyResult(slug); err != nil {
			return nil, err
		}
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.k] = p.v
	}
	return out, nil
}

// userAttributesSQL reads the attributes of user $2 of workspace $1, for
// scanAttribute.
const userAttributesSQL = "SELECT key, value FROM user_attributes WHERE workspace = $1 AND user_id = $2"

// scanAttribute reads a row of userAttributesSQL.
func scanAttribute(r pgx.Row) (key, value string, err error) {
	var k, v []byte
	err = r.Scan(&k, &v)
	return string(k), string(v), err
}

// PutUserAttribute implements store.Tx. The user must exist
// (store.ErrNotFound otherwise): the attribute row has a foreign key to
// it.
//
// Of a user the transaction has read, the write is deferred: it goes
// with the next statement or the COMMIT, a round trip less. It cannot
// fail but with the transaction: the user is in the transaction's
// snapshot, and a concurrent delete fails the foreign key's check as a
// serialization failure.
func (t *tx) PutUserAttribute(slug string, userID int64, key, value string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if t.users[userRef{slug, userID}] {
		return t.deferWrite(`INSERT INTO user_attributes (workspace, user_id, key, value) VALUES ($1, $2, $3, $4)
			ON CONFLICT (workspace, user_id, key) DO UPDATE SET value = excluded.value`,
			slug, userID, []byte(key), []byte(value))
	}
	tag, err := t.exec(`INSERT INTO user_attributes (workspace, user_id, key, value)
		SELECT workspace, id, $3::bytea, $4::bytea FROM users WHERE workspace = $1 AND id = $2
		ON CONFLICT (workspace, user_id, key) DO UPDATE SET value = excluded.value`,
		slug, userID, []byte(key), []byte(value))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return t.missing(slug, "user %d", userID)
	}
	return nil
}

// DeleteUserAttribute implements store.Tx.
func (t *tx) DeleteUserAttribute(slug string, userID int64, key string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec("DELETE FROM user_attributes WHERE workspace = $1 AND user_id = $2 AND key = $3",
		slug, userID, []byte(key))
	return deleted(tag, err, "attribute %q of user %d", key, userID)
}
