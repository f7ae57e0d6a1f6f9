// Package pgstore is a store.Store kept in a PostgreSQL database, through
// pgx and its connection pool: the store for a team that runs several
// processes (behind a load balancer, say) over one shared database. Any
// number of Stores in any number of processes may use one database at
// once; every rule of the identity package holds across them.
//
//	s, err := pgstore.Open(ctx, "postgres://identity:secret@db.example.com/identity", nil)
//	svc, err := identity.New(s, nil)
//
// or simply identity.Open("postgres://...", nil).
//
// # Schema
//
// Open creates and upgrades the schema itself: numbered SQL migrations
// embedded in the package (migrations/NNNN_name.sql), each applied once in
// a transaction of its own and recorded in schema_migrations. Open holds
// a PostgreSQL advisory lock for the schema while it migrates, so that
// processes starting together do not race, and refuses a schema newer
// than it knows. The tables go into the first existing schema of the
// connection's search_path (public by default; set search_path in the
// URL to choose another, as the tests do to get a schema each).
//
// The schema is relational, one table per record type, each row naming
// its workspace (a text slug), with foreign keys that cascade:
//
//	workspaces           slug, created_at, settings (opaque bytea)
//	sequences            (workspace, name) -> last id handed out
//	users                (workspace, id); username_fold, email_fold and
//	                     full_name_fold hold store.Fold of the three
//	                     fields, computed in Go; unique indexes on
//	                     (workspace, username_fold) and (workspace,
//	                     email_fold), a plain one on (workspace,
//	                     full_name_fold)
//	user_chunks          (workspace, chunk) -> users with ids in chunk
//	                     <<10 ... chunk<<10 + 1023
//	user_roles           (workspace, user_id, role_id) -> users
//	user_attributes      (workspace, user_id, key) -> value; -> users
//	roles, groups        (workspace, id); name_fold holds store.Fold of
//	                     the name, unique per workspace
//	group_members        (workspace, group_id, user_id) -> users; index
//	                     on (workspace, user_id, group_id)
//	group_roles          (workspace, group_id, role_id); index on
//	                     (workspace, role_id, group_id)
//	role_holders         (workspace, role_id, user_id) -> refs, the
//	                     reasons the user holds the role; no foreign key
//	role_counts,         (workspace, role_id or group_id, shard) -> n:
//	group_counts         the totals of RoleHolders and GroupMembers
//	claim_mappers        (workspace, attribute_key)
//	webhooks             (workspace, id); events text[]
//	deliveries           (workspace, id); kind ('webhook' or 'mail');
//	                     endpoint_id -> webhooks (NULL for a mail job);
//	                     due_at, and the due index on (due_at, id,
//	                     workspace) WHERE status = 'pending'; mail jobs
//	                     indexed on (workspace, id) WHERE kind = 'mail'
//	                     and on (workspace, user_id) for those of a user
//	sessions             (workspace, id); user_agent, address; amr
//	                     text[]; index on (workspace, user_id,
//	                     created_at, id)
//	api_keys             id; scopes text[]
//	oauth_clients        (workspace, id); redirect_uris,
//	                     post_logout_redirect_uris, grant_types and
//	                     claims text[]
//	verification_tokens  (workspace, id); purpose ('' for email
//	                     verification); index on (workspace, user_id)
//	signing_keys         (workspace, id)
//	auth_requests        (workspace, id); ui_locales; scopes and amr
//	                     text[]; index on (workspace, user_id) WHERE
//	                     user_id <> 0
//	grants               (workspace, id); scopes and amr text[]; index
//	                     on (workspace, user_id, created_at, id)
//	refresh_tokens       (workspace, id); grant_id names the grant,
//	                     successor_id ('' until used) the token that
//	                     replaced it; index on (workspace, grant_id)
//	login_attempts       (workspace, user_id); pending timestamptz[]
//	second_factors       (workspace, user_id); recovery_codes bytea[]
//	passkeys             (workspace, id); index on (workspace, user_id,
//	                     created_at, id)
//	passkey_handles      (workspace, user_id); unique (workspace, handle)
//	idempotency          (workspace, scope, key); index on expires_at
//	assets               (workspace, name); content_type, data bytea
//	audit_records        (workspace, id); actor_id, actor_display,
//	                     target_id, target_display, request_id and
//	                     changes bytea; indexes on (workspace,
//	                     actor_kind, actor_id, id), (workspace,
//	                     target_kind, target_id, id), (workspace,
//	                     action, id) and (workspace, outcome, id)
//	update_gate          no rows: the gate every Update locks (see below)
//
// Migration 0002 gave jobs their kind column: the rows of a schema that
// the previous release filled which have no endpoint, its mail jobs,
// became 'mail', the others 'webhook'. Migration 0003 added
// oauth_clients, 0004 the OpenID Provider's records: signing_keys,
// auth_requests, grants and refresh_tokens, 0005 login_attempts, the
// lockout state of users, and 0006 second_factors, the users' TOTP second
// factors, with the purpose column of verification_tokens (every token of
// an older schema got the empty purpose: email verification). Migration
// 0007 gave mail jobs their user_id (0, no user, for every job of an
// older schema) and added the indexes by user (and by grant for refresh
// tokens) through which DeleteUser finds a user's records: it deletes
// them in one statement, and DeleteWorkspace deletes the workspace's row,
// from which everything else cascades (see erasure.go). Migration 0008
// added the indexes a retention sweep finds what it removes by, by
// workspace and time: finished jobs by store.Delivery.FinishedAt,
// sessions by store.Session.EndedAt (both as expressions), single-use
// tokens, authorization requests, refresh tokens and grants by
// expires_at (see sweep.go). Migration 0009 indexed webhooks by event
// type, 0010 user attributes by value, and 0011 added roles and groups
// (see Roles and groups) and the claims of OAuth clients (none for the
// clients of an older schema). Migration 0012 gave sessions the client
// that started them (user_agent, address) and how the user signed in
// (amr), which authorization requests and grants carry on; requests their
// ui_locales; refresh tokens their successor_id; and added assets, the
// files a workspace serves (its logo, its clients' logos), which go with
// their workspace by the cascade. The rows of an older schema read back
// with these empty: no client known, no sign-in methods (nil, as the
// other stores give), no locales, no successor (TestUpgradeToSignInRecords).
// Migration 0013 added audit_records, the audit trail (see The audit
// trail), empty for the workspaces of an older schema
// (TestUpgradeToAuditTrail). Migration 0014 indexed the pending jobs by
// workspace and due time, for WorkspaceQueue, and 0015 dropped that index
// again: every enqueue and every change of a job's status paid for it,
// and WorkspaceQueue now reads the start of deliveries_due instead
// (TestUpgradeDropsWorkspaceDueIndex). Migration 0016 added passkeys and
// passkey_handles, the users' WebAuthn credentials and user handles,
// empty for an older schema; they go with their user by DeleteUser's
// statement and with their workspace by the cascade.
//
// The folded columns are computed with store.Fold in Go rather than with
// PostgreSQL's lower(), whose answers depend on the server's locale, so
// that this store agrees with every other on what "the same username" and
// "a matching prefix" mean. They, and the slugs, are text COLLATE "C":
// compared byte by byte, which for UTF-8 is code point order, the order of
// Go strings. A prefix search is therefore a range scan of each folded
// index, fold >= p AND fold < prefixEnd(p), where prefixEnd increments the
// last code point of p: no LIKE pattern, so '%', '_' and '\' in the search
// text are plain characters ("a_" matches only names that start with
// "a_"). The three ranges are combined with OR, which PostgreSQL answers
// with a bitmap of the three index scans, each user once.
//
// PostgreSQL text cannot hold NUL bytes or invalid UTF-8, yet the
// identity package lets some strings hold NUL (attribute keys and values,
// claim names) and the store contract lets callers pick session ids and
// idempotency keys freely. Those strings, password hashes (an imported
// Django salt is any bytes), delivery error texts, the session ids that
// authorization requests and grants name, the state and nonce a
// relying party sends, and the ids and names of an audit record's actor
// and target and its request id (a login tried, a client_id sent, an
// X-Request-Id forwarded, kept as given) are bytea, which keeps any Go
// string exactly. The other strings are text, for the benefit of whoever
// reads the tables: slugs, usernames, emails, full names, URLs, event
// names, scopes, token purposes, the ids the identity package generates
// (audit records' among them), a session's and an audit record's user
// agent and address, sign-in methods, ui_locales, the names and media
// types of assets (an asset's data is bytea), and the kinds, actions,
// outcomes and reasons of audit records. The identity
// package lets none of them hold what text cannot; a write of such a
// value straight to the store is refused with an error (as the other
// stores refuse an empty session id), and a lookup of one finds nothing.
//
// Every time is timestamptz NOT NULL, to the microsecond; Go's zero time,
// which the store package uses for "not set", is stored as itself
// (0001-01-01 00:00:00 UTC), so that round trips and the order of due
// times are exact. Times are read back in UTC.
//
// Roles, attributes and group memberships have a foreign key to their
// user, so adding one to a user that does not exist returns
// store.ErrNotFound (the identity package checks first anyway).
// Sessions, verification tokens, authorization requests, grants, login
// attempts and second factors have none: the store contract lets them
// name any user id; nor has a refresh token one to its grant or its
// successor.
//
// # Transactions
//
// Update runs its function in a SERIALIZABLE transaction. PostgreSQL's
// serializable snapshot isolation guarantees that the transactions that
// commit have the effect of running one at a time, and fails one of two
// transactions whose reads and writes could not be so ordered with a
// serialization failure (SQLSTATE 40001). That is what keeps the identity
// package's read-then-write rules (unique usernames and emails, at most 20
// claim mappers, the delivery leases) true across processes with no
// locking of its own: two processes that both read "no user named bob"
// and both insert one cannot both commit. Update then rolls the failed
// attempt back and runs the function again on a fresh snapshot; a
// deadlock (40P01) is retried the same way.
//
// Retrying alone does not guarantee progress: writers piling onto one row
// (a sequence counter, a small workspace's claim mappers, or rows that
// merely share an index page, since PostgreSQL tracks reads by page) can
// fail one another round after round, and an unlucky one could lose every
// round. So every Update holds the gate, a lock on the empty table
// update_gate taken with the BEGIN, before the snapshot, and
// released with the COMMIT. The first Options.OptimisticAttempts attempts
// (3) take it in SHARE mode and run side by side, with a random wait of a
// millisecond or few between them. The attempts after those take it in
// EXCLUSIVE mode: they wait for the running writers to finish, new ones
// queue behind them, and they run alone, across every process that uses
// the schema. A transaction that runs alone has no concurrent writer to
// conflict with, so it runs at REPEATABLE READ (serializable when nothing
// else writes, and free of SERIALIZABLE's page-level false conflicts) and
// commits. Writes pause for as long as the longest transaction running at
// that moment (a bulk import, say). With 16 writers of one Store, three
// Updates in a hundred run alone when all write one row, none when they
// write distinct rows of a table of 10,000 (BenchmarkStore/UpdateParallel;
// without the writer queue below, 55 and 27 in a hundred).
// Options.MaxAttempts bounds the attempts in all, for failures that come
// from outside the store. Views never touch the gate.
//
// The unique indexes are a second line of defence: a unique violation
// that gets past the identity package's checks is reported as
// store.ErrConflict.
//
// View and Update pass their transactions to the function through
// store.RunView and store.RunUpdate, which guarantee that a write in a
// View returns store.ErrReadOnly, that a Tx used after the function
// returned returns store.ErrTxDone, and that PutDelivery sees only
// well-formed jobs, before a method of this package runs; its methods
// check none of that.
//
// Once a statement of a transaction fails, PostgreSQL refuses the rest,
// and so does the Tx, without asking the server: it returns the first
// failure from every later statement. The store contract, though, lets a transaction carry on after PutUser
// reports ErrConflict or a write reports a missing workspace. Such writes
// therefore never fail in PostgreSQL: PutUser looks for a conflicting user
// in the same statement that writes, and writes only without one; other
// writes insert from a SELECT of their workspace (or endpoint, or user)
// and count the rows they wrote.
//
// # The writer queue and group commit
//
// SERIALIZABLE tracks what a transaction read by index page, not by row,
// so writers of different users conflict when the users' entries share a
// page: SetAttribute of user 7 reads the page of user_attributes' primary
// key that holds users 1 to 150 and writes a new entry into it (a new
// key, or a new value, since migration 0010 indexes values and an
// indexed value is never updated in place), and so does SetAttribute of
// user 8. Two such transactions that overlap in time read what the other
// writes, and one of them fails to serialize. Eight writers of
// neighbouring users thus failed each other about once in three attempts
// (0.3 retries per write), a quarter of the failures ended in the
// EXCLUSIVE gate, which stops every writer, and each commit paid a WAL
// flush of its own: eight writers committed hardly more than one.
//
// So the Updates of one Store line up in a queue (queue.go): one at a
// time runs its statements, from before its first until its last write
// is done; its COMMIT (and WAL flush) then overlaps with the statements
// of the next. (The COMMIT goes in the round trip of the last writes,
// behind a flush request: PostgreSQL sends the writes' results at once,
// which it would otherwise hold back with the COMMIT's until the WAL is
// flushed.) Within a process, a transaction's statements then never
// run beside another's, and the conflicts between its transactions all
// point one way, from the committing to the running, which SERIALIZABLE
// never needs to break: only a pair of transactions that each read what
// the other writes fails, as two Updates of the same row still do. The
// rule of serializability is untouched (every transaction is still
// SERIALIZABLE, and processes still meet only in PostgreSQL); the queue
// merely takes concurrency away. It is no lock that anything depends on,
// either: when the Update at its head has run its statements for
// Options.QueueWait (10 ms: a bulk import, or a function that waits for
// another Update), those behind it run beside it, as every Update did
// before.
//
// And the Update that takes the queue takes the Updates waiting in it
// with it, up to Options.MaxGroupSize (16), as one group (group.go): their
// functions run one after the other in one transaction, each in a
// savepoint of its own, and commit together, with one BEGIN, one COMMIT
// and one WAL flush. A function that fails (returns an error, panics,
// leaves a failed statement behind) is rolled back to its savepoint, with
// what the transaction kept in memory (an id it drew is drawn again by
// the next), and the others go on; its error is its Update's once the
// group has committed, for it decided on the group's snapshot and the
// writes before it, which then stand. If the transaction fails to
// serialize, every function of the group runs again, in later attempts,
// as store.Store allows. Each function runs on the goroutine of its own
// Update, which the group hands the transaction in turn, so that a panic
// or runtime.Goexit stays where it happened. Only Updates already waiting
// when a group takes the queue join it, so that all of them began before
// the group's snapshot: no Update misses what committed before it was
// called. Attempts that run alone neither lead nor join a group.
//
// A function's deferred writes (see Round trips) go with the next
// function's first statement, ahead of that function's savepoint, or
// with the group's COMMIT. One that fails there fails the group as a
// whole: the function whose write it was has ended and been kept, and
// rolling back to the savepoint before it would undo it behind its back.
// Only writes that cannot fail but with the transaction are deferred,
// so this is a serialization failure (the group runs again) or a server
// or connection failure, which fails every transaction anyway.
//
// Eight writers of neighbouring users now commit with hardly a retry (at
// most one or two in a thousand writes: a group's statements run while
// the group before it commits), nine in ten or more of them in groups. A
// function in a group costs one round trip (its reads, with the writes of
// the function before it), where one writer alone costs two and a WAL
// flush, so that on a 2-core machine eight writers commit about twice as
// many writes a second as one (BENCHMARKS.md, "PostgreSQL bulk paths"
// and the sections after it).
//
// # Round trips
//
// A transaction begins with its first statement: the BEGIN (and, for an
// Update, the gate) goes to the server in the same message as the first
// statement, in one round trip, through pgx's batches. A View then ends
// without waiting for its ROLLBACK: the connection keeps the read-only
// transaction open and goes to the next transaction that asks for a
// connection, which sends the ROLLBACK with its own first statement; if
// none comes within 2 ms, a timer sends it, off every caller's path. So a
// View of one statement is one round trip, and a View whose function
// sends nothing sends nothing. (A View that has returned holds its
// snapshot and its tables' ACCESS SHARE locks for those 2 ms at most; it
// writes nothing and locks no row.) An Update's COMMIT goes with the
// writes the transaction kept for its end (the sequence counters and the
// user counts), in one round trip.
//
// A write whose result the caller does not wait for is deferred: it goes
// with the transaction's next statement or its COMMIT, in their round
// trip. PutUserAttribute of a user the transaction has read (and not
// deleted since) is one: the user is in the transaction's snapshot, the
// write is a plain INSERT ... ON CONFLICT that affects one row, and a
// concurrent delete fails the foreign key's check as a serialization
// failure. If a deferred write fails all the same, the statement it went
// with did not run, and reports an earlier statement's failure rather
// than a result of its own; the transaction does not commit.
//
// GetUser is one statement and so one round trip. Claims reads the user,
// its attributes and the workspace's mappers: through store.Bulk's
// UserWithClaimInputs the three statements go in one batch, one round
// trip. Below that is no floor a store can reach: the reply to the
// statement is the answer. (A View that ran its statement without any
// transaction would save only the BEGIN and ROLLBACK in the same
// messages, not a round trip, and could not give a function that reads
// again one snapshot: which statement is the last is known only when the
// function returns.) SetAttribute reads the user and its attributes
// before it writes, through UserWithAttributes in one batch too, and its
// write is deferred to the COMMIT: two round trips, the read and the
// COMMIT. TestRoundTrips counts the messages of each call.
//
// # Bulk
//
// The Tx implements store.Bulk (bulk.go). ImportUsers checks the
// usernames and emails of a whole batch in one statement
// (UserKeysTaken: an index probe for each, in one round trip) and writes
// the batch with COPY (InsertUsers): users, then user_attributes,
// user_roles, group_members and second_factors, each table one COPY, the
// counts of user_chunks added at the commit as PutUser's are, and the
// holders the batch's roles and memberships make, with their counts,
// written by one deferred statement (see Round trips), which goes with
// the COMMIT. Every rule stays in the identity package, which checks the
// batch first in the same transaction; COPY only writes what it is
// given, and the unique indexes and foreign keys refuse what would break
// them (store.ErrConflict, store.ErrNotFound), failing the transaction.
// The identity package gets from the bulk path exactly what it gets
// record by record (TestImportUsersBulk and TestInsertUsersAccess
// compare them row by row). A batch of 10,000 users costs about a dozen
// messages, whatever its size, and the server's work bounds it: on a
// loaded 2-core machine a user costs 16-19 µs in all, and each attribute
// 10-12 µs more (its foreign key is checked, and it is indexed twice).
//
// View runs its function in a REPEATABLE READ READ ONLY transaction: one
// snapshot for all of its reads, which never fails to serialize and costs
// no predicate locks. (Serializable read-only transactions would also
// exclude the rare read-only anomaly, a snapshot of a state no serial
// order passes through, at the price of retries or, DEFERRABLE, of
// waiting for a safe snapshot; the identity package reads again, in the
// Update, whatever it writes.)
//
// NextID increments a counter row per workspace and sequence inside the
// transaction, so an id handed out by a transaction that rolls back is
// handed out again and none is seen twice. The first draw of a
// transaction updates the row, which locks it until the commit; later
// draws of the same transaction count on in memory and the last value is
// written once, before the commit (a row updated again and again in one
// transaction leaves a dead version behind each time, which every later
// update must step over). The row is a point of contention: two
// transactions that draw from the same sequence of the same workspace
// conflict, and the second is retried. This serializes the creation of
// users (and of webhook deliveries) within one workspace, which the
// uniqueness rules would largely do anyway; workspaces do not contend with
// each other.
//
// user_chunks counts the users of each chunk of 1024 consecutive ids, as
// boltstore's user_chunks bucket does. PutUser counts the users it
// inserts in memory, and the counts are added once, before the commit.
// The total of an unfiltered listing is their sum, and a page at a deep
// offset starts at the chunk that holds it rather than stepping over
// every user before it.
//
// # Roles and groups
//
// Roles and groups are records of tables of their own (migration 0011),
// their names unique by store.Fold within a workspace, as usernames are.
// Roles and Groups find a prefix with a range scan of the folded names,
// literally, as the user search does. Memberships are group_members,
// whose primary key lists a group's members in id order and whose index
// by user lists a user's groups; the roles a group carries are
// group_roles.
//
// Who holds a role is kept, not worked out on each read: role_holders
// has one row for each role and user that holds it, directly or through
// groups, whose refs counts the reasons (one for a direct assignment,
// one for each of the user's groups that carries the role); the row goes
// with its last reason. role_counts and group_counts hold the totals. So
// a page of RoleHolders or GroupMembers reads its ids from a primary key,
// stepping over its offset, and the total from the rows of one count: the
// first page of a group of a million members costs what the first page
// of a group of ten does. The writes that move many reasons at once pay
// for it: AddGroupRole, RemoveGroupRole and DeleteGroup change a row of
// role_holders for each member of the group (a role given to a group of
// a million members writes a million rows, in 4-6 s on a 2-core
// machine), and DeleteRole deletes the role's holders and, through them,
// its direct assignments (user_roles, which needs no index by role).
// AddGroupMember and RemoveGroupMember change a row for each role the
// group carries, AddUserRole and RemoveUserRole one.
//
// Each of these methods is one statement, and so one round trip: its
// data-modifying CTEs, which share one snapshot, change the membership or
// assignment, the holders and the counts together, and report what the
// method returns (whether the user exists, whether there was anything to
// remove), so that no statement fails for a row that is not there and the
// transaction goes on, as the store contract lets it. UserAccess reads
// what a user holds in one statement too. DeleteUser deletes the user's
// memberships and holder rows (found by the primary key through the
// roles the user holds) in its one statement, and DeleteWorkspace the
// workspace's holders, which have no foreign key, with its row. A
// membership, like a role assignment, has a foreign key to its user:
// adding a user that does not exist is store.ErrNotFound.
//
// A page of RoleHolders or GroupMembers runs with PostgreSQL's generic
// plan (SET LOCAL plan_cache_mode, in the statement's round trip), which
// is the plan of every call. The plan cache prices a generic plan's LIMIT
// at a tenth of the rows it expects of a group, which a few large groups
// make many, and would plan each call anew: that cost 60-70 µs a page.
//
// The counts are hot rows: each member added to a group updates the
// group's count, each holder a role gains or loses the role's. Two
// SERIALIZABLE transactions that update one row cannot both commit, and
// the writer queue runs a transaction's statements while the one before
// it commits, so on one row each writer of a group's members would fail
// the next. So each count is the sum of up to 16 rows, its shards, and a
// Store hands its write transactions the shards in turn: a transaction
// and the next update different rows, and transactions of two processes
// meet on one row once in 16 times. With 8 writers adding members to one
// group that carries a role (BenchmarkPGAccess, 100,000 members), one
// Store retried 30-44 writes in a hundred with one row per count, 5 in a
// hundred running alone, and committed 1,500 a second; with 16 shards it
// retried 1 in 10,000 or none, and committed 3,500-3,750 a second. Two
// Stores (as two processes) retried 89-98 in a hundred with one row and
// 2-3 with 16, committing 700-870 and 2,770-2,830 writes a second.
//
// Before migration 0011 a role was any id assigned to a user. The
// migration gives every role id assigned in a workspace a record named
// "role-" and the id, created at the time of the upgrade with version 1,
// moves the workspace's roles sequence past the largest such id, and
// makes the direct assignments the holders and their counts
// (TestUpgradeToRoleRecords).
//
// # The audit trail
//
// audit_records holds one row per record (migration 0013), keyed by
// (workspace, id). The identity package makes ids time-ordered and they
// are text COLLATE "C", so the primary key is the trail in time order,
// and each filter of AuditRecords has an index that ends in the id: by
// actor (actor_kind, actor_id), by target (target_kind, target_id), by
// action and by outcome. A page is one statement, WHERE the filters,
// the id between After and Before, ORDER BY id, LIMIT: PostgreSQL reads
// one range of one index in order, in either direction, and stops at the
// page's end, whatever the size of the trail. Several actions are not
// action = ANY(...), which PostgreSQL answers by reading every record of
// each action and sorting them (or by walking the primary key and
// throwing away what does not match): each action is a subquery of its
// own, ordered and limited, and the page is their UNION ALL, ordered
// and limited again, which PostgreSQL merges (Merge Append), reading
// about a page in all. Further filters are checked on the rows the
// chosen index yields. Pages run with the generic plan, as pages of
// members do (see Roles and groups); TestAuditPagesUseTheirIndex reads
// EXPLAIN ANALYZE of each filter's page, with the custom plan and the
// generic one, on a trail of 200,000 records. A bound that text cannot
// hold (After, Before, DeleteAuditRecords' beforeID) is replaced by the
// least string text holds that is not below it, which selects the same
// ids; a kind, action or outcome that text cannot hold matches nothing.
//
// A record is written with no read of any other (no "last record", no
// counter, no chain), so the transactions of a workspace append side by
// side: a write inserts one row and its index entries, and under
// SERIALIZABLE neither it nor its check of the primary key leaves a
// read that another append's write conflicts with
// (TestAuditAppendsSideBySide holds eight appends of one workspace open
// at once, with retries off). In a workspace the transaction has read
// (or one of whose users it has read) the write is deferred to the
// COMMIT (see Round trips): an audited change costs no round trip more
// than the change. DeleteAuditRecords deletes the lowest ids below its
// bound, as the retention sweeps delete (see sweep.go), and
// DeleteWorkspace deletes the trail by the foreign key's cascade.
//
// # Costs
//
// Every call is one round trip to the server; a lookup that finds nothing,
// a listing whose page comes out empty and a page at a deep offset cost a
// second one. The BEGIN and ROLLBACK of a View ride with statements (see
// Round trips); an Update adds its COMMIT (one fsync of the server's WAL,
// shared by a group). ImportUsers costs a dozen round trips a batch and
// the server's work (see Bulk): 52,000-63,000 users a second without
// attributes on a loaded 2-core machine, 17,000-21,000 with three each.
// A user by id, username or email is a unique index lookup, as is an
// asset by name; an unfiltered page costs its size plus, at a deep
// offset, a read of the chunk counts (one row per 1024 users); a prefix
// search costs in proportion to the users it matches, whose ids it
// collects, counts and sorts; claim mappers, roles, attributes, sessions,
// a user's grants and a webhook's deliveries are index range scans. A
// page of a group's members or of a role's holders costs its size and its
// offset and the total a read of at most 16 count rows (see Roles and
// groups): about 100 µs a call for the first page of a group of a
// million members, as for a user's groups. A page of the audit trail is
// one range of one index, whatever the trail's size: 0.2-0.5 ms at a
// million records on a loaded 2-core machine, a dozen actions merged
// about twice that; a record adds no round trip to its change, and about
// 7 KB of WAL at a million records, mostly the page image of the leaf of
// the index by target it lands on (BENCHMARKS.md, "Audit trail on
// PostgreSQL"). DueDeliveries and NextDueAt read the start of the due
// index. PendingDeliveries counts the
// due index's entries, in proportion to the pending deliveries: it serves
// metrics, not the dispatcher. WorkspaceQueue reads the start of the due
// index too, in one query: its first limit entries, of which the
// workspace's are counted and the first is its earliest, and whether one
// more follows them (the count is then complete); two index-only scans of
// at most limit + 1 entries, whatever the queue's length.
//
// # The delivery queue
//
// The identity package's dispatchers plan in a View (DueDeliveries reads
// the due index) and claim in an Update, reading each planned delivery
// again with ClaimDelivery, which is SELECT ... FOR UPDATE SKIP LOCKED: a
// delivery another dispatcher is claiming right now is skipped at once
// rather than waited for, and one it claimed and committed since the
// snapshot fails the claim with a serialization failure and a retry that
// then sees the lease. So any number of dispatchers in any number of
// processes work one queue, and no attempt is ever sent twice at once.
//
// # Connections and contexts
//
// Open takes a postgres:// URL or a keyword/value connection string, and
// every parameter pgx and pgxpool accept (sslmode, pool_max_conns,
// connect_timeout, search_path, ...). ctx bounds the wait for a
// connection, for the writer queue, for a group's turn and, for an
// attempt that runs alone, for the gate; once the function runs, its
// statements (the first with the BEGIN) and the COMMIT run to their end
// even if ctx is cancelled meanwhile, as store.Store promises, so that
// Update never returns without knowing whether it committed.
//
// Tests run against the server named by the environment variable
// IDENTITY_TEST_POSTGRES; package pgtest gives each test a schema of its
// own. Without the variable, the tests start a throwaway server of their
// own if PostgreSQL is installed (Debian's postgresql package), in a
// temporary directory removed when they end, and skip if it is not.
package pgstore
