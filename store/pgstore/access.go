package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// Roles and groups (migration 0011). The records are the tables roles and
// groups; memberships are group_members, indexed both ways; the roles of
// groups are group_roles. role_holders holds one row per role and user
// that holds it, whose refs counts the reasons (1 for a direct
// assignment, plus one for each of the user's groups that carries the
// role), and role_counts and group_counts count the rows of role_holders
// per role and of group_members per group: RoleHolders and GroupMembers
// read a page of a primary key and the rows of one count, whatever the
// number of holders or members.
//
// Every statement that changes a reason to hold a role changes the
// holders and the counts with it, in the same statement (data-modifying
// CTEs, which all see the statement's snapshot): one round trip per
// method, and no state in memory for a group's savepoints to undo. The
// CTEs of holdCTEs and releaseCTEs do it for the (role_id, user_id) pairs
// whose reason is added or removed.
//
// A count is the sum of its shards (up to countShards rows, see
// migration 0011), and a write transaction adds what it changes to its
// own shard, tx.shard: the Store hands its write transactions the shards
// in turn, so that a transaction and the next, whose statements run while
// the first commits, update different rows. On one row, the second would
// wait for the first's commit and then fail to serialize, every time.

// countShards is how many rows a count is spread over.
const countShards = 16

// countCTE returns the CTE name, which adds to count table (role_counts
// or group_counts, whose id column is column) the rows (id, n) of the
// query rows, in the shard of parameter shard.
func countCTE(name, table, column, rows, shard string) string {
	return name + ` AS (
	INSERT INTO ` + table + ` AS c (workspace, ` + column + `, shard, n)
	SELECT $1::text, d.id, ` + shard + `::smallint, d.n FROM (` + rows + `) AS d (id, n)
	ON CONFLICT (workspace, ` + column + `, shard) DO UPDATE SET n = c.n + excluded.n
)`
}

// holdCTEs returns CTEs that add a reason to hold for each (role_id,
// user_id) row of the CTE pairs (each pair once) in workspace $1: a new
// holder row, counted in the shard of parameter shard of role_counts, or
// one more reason on an existing one. A row whose refs is 1 after the
// upsert is new: existing rows have at least 1 before it.
func holdCTEs(pairs, shard string) string {
	return `held AS (
	INSERT INTO role_holders AS h (workspace, role_id, user_id, refs)
	SELECT $1::text, role_id, user_id, 1 FROM ` + pairs + `
	ON CONFLICT (workspace, role_id, user_id) DO UPDATE SET refs = h.refs + 1
	RETURNING role_id, refs
), ` + countCTE("counted", "role_counts", "role_id", "SELECT role_id, count(*) FROM held WHERE refs = 1 GROUP BY role_id", shard)
}

// releaseCTEs returns CTEs that take away a reason to hold for each
// (role_id, user_id) row of the CTE pairs (each pair once) in workspace
// $1: a holder row with one reason goes, and its role's count loses it
// (in the shard of parameter shard); one with more keeps one less. The
// DELETE and the UPDATE touch disjoint rows (refs = 1 and refs > 1 in the
// statement's snapshot), as a row may be changed only once in a
// statement.
func releaseCTEs(pairs, shard string) string {
	return `dropped AS (
	DELETE FROM role_holders h USING ` + pairs + ` p
	WHERE h.workspace = $1 AND h.role_id = p.role_id AND h.user_id = p.user_id AND h.refs = 1
	RETURNING h.role_id
), kept AS (
	UPDATE role_holders h SET refs = h.refs - 1 FROM ` + pairs + ` p
	WHERE h.workspace = $1 AND h.role_id = p.role_id AND h.user_id = p.user_id AND h.refs > 1
), ` + countCTE("uncounted", "role_counts", "role_id", "SELECT role_id, -count(*) FROM dropped GROUP BY role_id", shard)
}

// Direct assignments.

// addUserRoleSQL assigns role $3 to user $2 of workspace $1 unless it is
// assigned, with the holder it makes (counted in shard $4), and reports
// whether the user exists: it writes nothing otherwise, so that the
// foreign key never fails the transaction.
var addUserRoleSQL = `WITH u AS (
	SELECT workspace, id FROM users WHERE workspace = $1 AND id = $2
), added AS (
	INSERT INTO user_roles (workspace, user_id, role_id) SELECT workspace, id, $3::bigint FROM u
	ON CONFLICT DO NOTHING
	RETURNING role_id, user_id
), ` + holdCTEs("added", "$4") + `
SELECT EXISTS (SELECT 1 FROM u)`

// removeUserRoleSQL removes the direct assignment of role $3 to user $2
// of workspace $1, with the reason to hold it (counted in shard $4), and
// reports whether there was one.
var removeUserRoleSQL = `WITH removed AS (
	DELETE FROM user_roles WHERE workspace = $1 AND user_id = $2 AND role_id = $3
	RETURNING role_id, user_id
), ` + releaseCTEs("removed", "$4") + `
SELECT EXISTS (SELECT 1 FROM removed)`

// UserRoles implements store.Tx.
func (t *tx) UserRoles(slug string, userID int64) ([]int64, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT role_id FROM user_roles WHERE workspace = $1 AND user_id = $2 ORDER BY role_id",
		[]any{slug, userID}, func(r pgx.Row) (id int64, err error) { return id, r.Scan(&id) })
}

// AddUserRole implements store.Tx in one statement, the holder and its
// count included. The user must exist (store.ErrNotFound otherwise): the
// role row has a foreign key to it.
func (t *tx) AddUserRole(slug string, userID, roleID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var userExists bool
	if _, err := t.queryRow(addUserRoleSQL, []any{slug, userID, roleID, t.shard}, &userExists); err != nil {
		return err
	}
	if !userExists {
		return t.missing(slug, "user %d", userID)
	}
	return nil
}

// RemoveUserRole implements store.Tx in one statement, the holder and its
// count included: the user keeps holding the role if a group of theirs
// carries it.
func (t *tx) RemoveUserRole(slug string, userID, roleID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var removed bool
	if _, err := t.queryRow(removeUserRoleSQL, []any{slug, userID, roleID, t.shard}, &removed); err != nil {
		return err
	}
	if !removed {
		return notFound("role %d of user %d", roleID, userID)
	}
	return nil
}

// The records of roles and groups, which share their shape: a table of
// named records (store.Role, and store.Group converted from and to it).

// namedTable holds the statements of one table of named records.
type namedTable struct {
	what                   string // "role" or "group", for errors
	put, get, byName       string
	bounded, unbounded     string // a page of those whose name_fold is in [$2, $3), or >= $2
	countBounded, countAll string // their number, and whether the workspace exists
}

// newNamedTable returns the statements of table.
func newNamedTable(table, what string) namedTable {
	const columns = "id, name, description, created_at, updated_at, version"
	page := func(match string) string {
		return "SELECT " + columns + ", count(*) OVER () FROM " + table + " WHERE workspace = $1 AND " + match +
			" ORDER BY id OFFSET $%d LIMIT $%d"
	}
	count := func(match string) string {
		return "SELECT (SELECT count(*) FROM " + table + " WHERE workspace = $1 AND " + match +
			"), EXISTS (SELECT 1 FROM workspaces WHERE slug = $1)"
	}
	const bounded, unbounded = "name_fold >= $2 AND name_fold < $3", "name_fold >= $2"
	return namedTable{
		what: what,
		// The conflict is read in the statement that writes, so that a
		// taken name never fails the transaction (see putUserSQL).
		put: `WITH conflict AS (
			SELECT 1 FROM ` + table + ` WHERE workspace = $1 AND id <> $2 AND name_fold = $4 LIMIT 1
		), written AS (
			INSERT INTO ` + table + ` (workspace, id, name, name_fold, description, created_at, updated_at, version)
			SELECT slug, $2::bigint, $3::text, $4::text, $5::text, $6::timestamptz, $7::timestamptz, $8::bigint
			FROM workspaces WHERE slug = $1 AND NOT EXISTS (SELECT 1 FROM conflict)
			ON CONFLICT (workspace, id) DO UPDATE SET name = excluded.name, name_fold = excluded.name_fold,
				description = excluded.description, created_at = excluded.created_at,
				updated_at = excluded.updated_at, version = excluded.version
			RETURNING 1
		)
		SELECT EXISTS (SELECT 1 FROM conflict), EXISTS (SELECT 1 FROM written)`,
		get:          "SELECT " + columns + " FROM " + table + " WHERE workspace = $1 AND id = $2",
		byName:       "SELECT id FROM " + table + " WHERE workspace = $1 AND name_fold = $2",
		bounded:      fmt.Sprintf(page(bounded), 4, 5),
		unbounded:    fmt.Sprintf(page(unbounded), 3, 4),
		countBounded: count(bounded),
		countAll:     count(unbounded),
	}
}

var (
	rolesTable  = newNamedTable("roles", "role")
	groupsTable = newNamedTable("groups", "group")
)

// scanNamed reads a row of the columns of a named record, followed by the
// columns that tail point to.
func scanNamed(r pgx.Row, tail ...any) (store.Role, error) {
	var n store.Role
	err := r.Scan(append([]any{&n.ID, &n.Name, &n.Description, &n.CreatedAt, &n.UpdatedAt, &n.Version}, tail...)...)
	return n, err
}

// putNamed writes the record n to nt's table unless another record of
// the workspace has its folded name (store.ErrConflict).
func (t *tx) putNamed(nt namedTable, slug string, n store.Role) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText(nt.what+" name", n.Name, nt.what+" description", n.Description); err != nil {
		return err
	}
	var conflict, written bool
	_, err := t.queryRow(nt.put, []any{slug, n.ID, n.Name, store.Fold(n.Name), n.Description,
		ts(n.CreatedAt), ts(n.UpdatedAt), n.Version}, &conflict, &written)
	switch {
	case err != nil:
		return err
	case conflict:
		return fmt.Errorf("pgstore: %s %d: name %q: %w", nt.what, n.ID, n.Name, store.ErrConflict)
	case !written:
		return notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	return nil
}

// getNamed reads the record with the id from nt's table.
func (t *tx) getNamed(nt namedTable, slug string, id int64) (store.Role, error) {
	if !storable(slug) {
		return store.Role{}, notFound("workspace %q", slug)
	}
	return getRow(t, slug, t.row(nt.get, slug, id), func(r pgx.Row) (store.Role, error) { return scanNamed(r) },
		nt.what+" %d", id)
}

// namedID returns the id of the record of nt's table whose folded name is
// Fold(name).
func (t *tx) namedID(nt namedTable, slug, name string) (int64, error) {
	if !storable(slug) {
		return 0, notFound("workspace %q", slug)
	}
	folded := store.Fold(name)
	if !storable(folded) {
		// putNamed stores no such name.
		return 0, t.missing(slug, "%s named %q", nt.what, name)
	}
	var id int64
	found, err := t.queryRow(nt.byName, []any{slug, folded}, &id)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, t.missing(slug, "%s named %q", nt.what, name)
	}
	return id, nil
}

// listNamed reads one page of the records of nt's table that match q, in
// ascending id order, and their number in all. The prefix is a range scan
// of the unique index of folded names (see prefixEnd): literal, with no
// LIKE pattern. A page comes with its total in one round trip; an empty
// page costs a second, for the total and whether the workspace exists.
// A workspace has few roles and groups, so the matches are counted.
func (t *tx) listNamed(nt namedTable, slug string, q store.NameQuery) ([]store.Role, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	offset, limit := max(q.Offset, 0), max(q.Limit, 0)
	prefix := store.Fold(q.Prefix)
	if !storable(prefix) {
		// No stored folded name holds what text cannot.
		return nil, 0, t.emptyResult(slug)
	}
	pageSQL, countSQL, args := nt.unbounded, nt.countAll, []any{slug, prefix}
	if end, bounded := prefixEnd(prefix); bounded {
		pageSQL, countSQL, args = nt.bounded, nt.countBounded, append(args, end)
	}
	var recs []store.Role
	var total int64
	if limit > 0 {
		var err error
		recs, err = collect(t, pageSQL, append(args, offset, limit), func(r pgx.Rows) (store.Role, error) {
			return scanNamed(r, &total)
		})
		if err != nil {
			return nil, 0, err
		}
	}
	if len(recs) == 0 {
		var exists bool
		if _, err := t.queryRow(countSQL, args, &total, &exists); err != nil {
			return nil, 0, err
		}
		if !exists {
			return nil, 0, notFound("workspace %q", slug)
		}
		t.knowSpace(slug)
	}
	return recs, int(total), nil
}

// Roles.

// PutRole implements store.Tx. It refuses a name or description that
// PostgreSQL text cannot hold.
func (t *tx) PutRole(slug string, r store.Role) error { return t.putNamed(rolesTable, slug, r) }

// Role implements store.Tx.
func (t *tx) Role(slug string, id int64) (store.Role, error) { return t.getNamed(rolesTable, slug, id) }

// RoleIDByName implements store.Tx.
func (t *tx) RoleIDByName(slug, name string) (int64, error) { return t.namedID(rolesTable, slug, name) }

// Roles implements store.Tx.
func (t *tx) Roles(slug string, q store.NameQuery) ([]store.Role, int, error) {
	return t.listNamed(rolesTable, slug, q)
}

// deleteRoleSQL deletes role $2 of workspace $1 and everything that names
// it, once its record is found: its holders, and through them its direct
// assignments (a probe of user_roles' primary key for each holder, so
// that user_roles needs no index by role), its assignments to groups
// (group_roles_role) and its count.
const deleteRoleSQL = `WITH r AS (
	DELETE FROM roles WHERE workspace = $1 AND id = $2 RETURNING id
), h AS (
	DELETE FROM role_holders WHERE workspace = $1 AND role_id = $2 AND EXISTS (SELECT 1 FROM r) RETURNING user_id
), d AS (
	DELETE FROM user_roles WHERE workspace = $1 AND role_id = $2 AND user_id IN (SELECT user_id FROM h)
), g AS (
	DELETE FROM group_roles WHERE workspace = $1 AND role_id = $2 AND EXISTS (SELECT 1 FROM r)
), c AS (
	DELETE FROM role_counts WHERE workspace = $1 AND role_id = $2 AND EXISTS (SELECT 1 FROM r)
)
SELECT EXISTS (SELECT 1 FROM r)`

// DeleteRole implements store.Tx in one statement (deleteRoleSQL), which
// costs in proportion to the role's holders.
func (t *tx) DeleteRole(slug string, id int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var found bool
	if _, err := t.queryRow(deleteRoleSQL, []any{slug, id}, &found); err != nil {
		return err
	}
	if !found {
		return t.missing(slug, "role %d", id)
	}
	return nil
}

// Groups.

// PutGroup implements store.Tx. It refuses a name or description that
// PostgreSQL text cannot hold.
func (t *tx) PutGroup(slug string, g store.Group) error {
	return t.putNamed(groupsTable, slug, store.Role(g))
}

// Group implements store.Tx.
func (t *tx) Group(slug string, id int64) (store.Group, error) {
	g, err := t.getNamed(groupsTable, slug, id)
	return store.Group(g), err
}

// GroupIDByName implements store.Tx.
func (t *tx) GroupIDByName(slug, name string) (int64, error) {
	return t.namedID(groupsTable, slug, name)
}

// Groups implements store.Tx.
func (t *tx) Groups(slug string, q store.NameQuery) ([]store.Group, int, error) {
	recs, total, err := t.listNamed(groupsTable, slug, q)
	var groups []store.Group
	for _, r := range recs {
		groups = append(groups, store.Group(r))
	}
	return groups, total, err
}

// deleteGroupSQL deletes group $2 of workspace $1 and everything that
// names it, once its record is found: its roles, its members and its
// count, and for each of its roles and each of its members the reason to
// hold the role that the membership was (counted in shard $3).
var deleteGroupSQL = `WITH g AS (
	DELETE FROM groups WHERE workspace = $1 AND id = $2 RETURNING id
), gr AS (
	DELETE FROM group_roles WHERE workspace = $1 AND group_id = $2 AND EXISTS (SELECT 1 FROM g) RETURNING role_id
), gm AS (
	DELETE FROM group_members WHERE workspace = $1 AND group_id = $2 AND EXISTS (SELECT 1 FROM g) RETURNING user_id
), gc AS (
	DELETE FROM group_counts WHERE workspace = $1 AND group_id = $2 AND EXISTS (SELECT 1 FROM g)
), lost AS (
	SELECT gr.role_id, gm.user_id FROM gr CROSS JOIN gm
), ` + releaseCTEs("lost", "$3") + `
SELECT EXISTS (SELECT 1 FROM g)`

// DeleteGroup implements store.Tx in one statement (deleteGroupSQL),
// which costs in proportion to the group's members times its roles.
func (t *tx) DeleteGroup(slug string, id int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var found bool
	if _, err := t.queryRow(deleteGroupSQL, []any{slug, id, t.shard}, &found); err != nil {
		return err
	}
	if !found {
		return t.missing(slug, "group %d", id)
	}
	return nil
}

// Memberships.

// addGroupMemberSQL makes user $3 of workspace $1 a member of group $2
// unless it is one, with its count and the holders of the group's roles
// the membership makes (counted in shard $4), and reports whether the
// user exists: it writes nothing otherwise, so that the foreign key never
// fails the transaction.
var addGroupMemberSQL = `WITH u AS (
	SELECT workspace, id FROM users WHERE workspace = $1 AND id = $3
), added AS (
	INSERT INTO group_members (workspace, group_id, user_id) SELECT workspace, $2::bigint, id FROM u
	ON CONFLICT DO NOTHING
	RETURNING group_id, user_id
), ` + countCTE("members", "group_counts", "group_id", "SELECT group_id, 1 FROM added", "$4") + `, gained AS (
	SELECT r.role_id, a.user_id FROM added a JOIN group_roles r ON r.workspace = $1 AND r.group_id = a.group_id
), ` + holdCTEs("gained", "$4") + `
SELECT EXISTS (SELECT 1 FROM u)`

// removeGroupMemberSQL ends the membership of user $3 of workspace $1 in
// group $2, with its count and the reasons to hold the group's roles it
// was (counted in shard $4), and reports whether there was one.
var removeGroupMemberSQL = `WITH removed AS (
	DELETE FROM group_members WHERE workspace = $1 AND group_id = $2 AND user_id = $3
	RETURNING group_id, user_id
), ` + countCTE("members", "group_counts", "group_id", "SELECT group_id, -1 FROM removed", "$4") + `, lost AS (
	SELECT g.role_id, r.user_id FROM removed r JOIN group_roles g ON g.workspace = $1 AND g.group_id = r.group_id
), ` + releaseCTEs("lost", "$4") + `
SELECT EXISTS (SELECT 1 FROM removed)`

// AddGroupMember implements store.Tx in one statement, the count and the
// holders of the group's roles included. The user must exist
// (store.ErrNotFound otherwise): the membership has a foreign key to it,
// as a role assignment has.
func (t *tx) AddGroupMember(slug string, groupID, userID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var userExists bool
	if _, err := t.queryRow(addGroupMemberSQL, []any{slug, groupID, userID, t.shard}, &userExists); err != nil {
		return err
	}
	if !userExists {
		return t.missing(slug, "user %d", userID)
	}
	return nil
}

// RemoveGroupMember implements store.Tx in one statement, the count and
// the holders of the group's roles included.
func (t *tx) RemoveGroupMember(slug string, groupID, userID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var removed bool
	if _, err := t.queryRow(removeGroupMemberSQL, []any{slug, groupID, userID, t.shard}, &removed); err != nil {
		return err
	}
	if !removed {
		return notFound("user %d in group %d", userID, groupID)
	}
	return nil
}

// GroupMembers implements store.Tx in one statement: the page, from the
// primary key of group_members, and the total, the sum of the group's
// shards of group_counts.
func (t *tx) GroupMembers(slug string, groupID int64, offset, limit int) ([]int64, int, error) {
	return t.idPage(slug, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE slug = $1),
		(SELECT sum(n)::bigint FROM group_counts WHERE workspace = $1 AND group_id = $2),
		ARRAY(SELECT user_id FROM group_members WHERE workspace = $1 AND group_id = $2
			ORDER BY user_id OFFSET $3 LIMIT $4)`, groupID, offset, limit)
}

// UserGroups implements store.Tx in one statement, through the index of
// memberships by user.
func (t *tx) UserGroups(slug string, userID int64) ([]int64, error) {
	ids, _, err := t.idPage(slug, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE slug = $1), NULL::bigint,
		ARRAY(SELECT group_id FROM group_members WHERE workspace = $1 AND user_id = $2 ORDER BY group_id)`, userID)
	return ids, err
}

// The roles of groups.

// addGroupRoleSQL makes group $2 of workspace $1 carry role $3 unless it
// does, with the holders it makes of the group's members (counted in
// shard $4), and reports whether the workspace exists.
var addGroupRoleSQL = `WITH ws AS (
	SELECT slug FROM workspaces WHERE slug = $1
), added AS (
	INSERT INTO group_roles (workspace, group_id, role_id) SELECT slug, $2::bigint, $3::bigint FROM ws
	ON CONFLICT DO NOTHING
	RETURNING group_id, role_id
), gained AS (
	SELECT a.role_id, m.user_id FROM added a JOIN group_members m ON m.workspace = $1 AND m.group_id = a.group_id
), ` + holdCTEs("gained", "$4") + `
SELECT EXISTS (SELECT 1 FROM ws)`

// removeGroupRoleSQL ends role $3 of group $2 of workspace $1, with the
// reasons to hold it that the group's members had through it (counted in
// shard $4), and reports whether the group carried it.
var removeGroupRoleSQL = `WITH removed AS (
	DELETE FROM group_roles WHERE workspace = $1 AND group_id = $2 AND role_id = $3
	RETURNING group_id, role_id
), lost AS (
	SELECT r.role_id, m.user_id FROM removed r JOIN group_members m ON m.workspace = $1 AND m.group_id = r.group_id
), ` + releaseCTEs("lost", "$4") + `
SELECT EXISTS (SELECT 1 FROM removed)`

// AddGroupRole implements store.Tx in one statement, which gives each
// member of the group the role: it costs in proportion to the members.
func (t *tx) AddGroupRole(slug string, groupID, roleID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var exists bool
	if _, err := t.queryRow(addGroupRoleSQL, []any{slug, groupID, roleID, t.shard}, &exists); err != nil {
		return err
	}
	if !exists {
		return notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	return nil
}

// RemoveGroupRole implements store.Tx in one statement, in proportion to
// the members of the group, as AddGroupRole.
func (t *tx) RemoveGroupRole(slug string, groupID, roleID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var removed bool
	if _, err := t.queryRow(removeGroupRoleSQL, []any{slug, groupID, roleID, t.shard}, &removed); err != nil {
		return err
	}
	if !removed {
		return notFound("role %d of group %d", roleID, groupID)
	}
	return nil
}

// GroupRoles implements store.Tx in one statement.
func (t *tx) GroupRoles(slug string, groupID int64) ([]int64, error) {
	ids, _, err := t.idPage(slug, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE slug = $1), NULL::bigint,
		ARRAY(SELECT role_id FROM group_roles WHERE workspace = $1 AND group_id = $2 ORDER BY role_id)`, groupID)
	return ids, err
}

// Holders.

// RoleHolders implements store.Tx in one statement: the page, from the
// primary key of role_holders, and the total, the sum of the role's
// shards of role_counts.
func (t *tx) RoleHolders(slug string, roleID int64, offset, limit int) ([]int64, int, error) {
	return t.idPage(slug, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE slug = $1),
		(SELECT sum(n)::bigint FROM role_counts WHERE workspace = $1 AND role_id = $2),
		ARRAY(SELECT user_id FROM role_holders WHERE workspace = $1 AND role_id = $2
			ORDER BY user_id OFFSET $3 LIMIT $4)`, roleID, offset, limit)
}

// idPage runs sql, a query of workspace $1 and id $2 (and, when page is
// given, offset $3 and limit $4) for one row: whether the workspace
// exists, a total (NULL for none, or 0) and an array of ids. It returns
// store.ErrNotFound when the workspace does not exist.
//
// A page is read with PostgreSQL's generic plan, which is the plan of
// every call (an index scan of the page's range, in order): the plan
// cache would otherwise plan each call anew, because it prices the
// generic plan's LIMIT of an unknown size at a tenth of the rows it
// expects of the group or role, which a few large ones make many. The
// SET LOCAL before it and the one after, back to the default, go in
// the statement's round trip and the next; planning each call cost
// 60-70 µs a page (BenchmarkPGAccess).
func (t *tx) idPage(slug, sql string, id int64, page ...int) ([]int64, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	args := []any{slug, id}
	paged := len(page) == 2
	if paged {
		args = append(args, max(page[0], 0), max(page[1], 0))
		if t.failed == nil {
			t.pending = append(t.pending, queued{sql: "SET LOCAL plan_cache_mode = force_generic_plan"})
		}
	}
	var exists bool
	var total *int64
	var ids []int64
	if _, err := t.queryRow(sql, args, &exists, &total, &ids); err != nil {
		return nil, 0, err
	}
	if paged {
		t.pending = append(t.pending, queued{sql: "SET LOCAL plan_cache_mode TO DEFAULT"})
	}
	if !exists {
		return nil, 0, notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	if len(ids) == 0 {
		ids = nil
	}
	n := 0
	if total != nil {
		n = int(*total)
	}
	return ids, n, nil
}
