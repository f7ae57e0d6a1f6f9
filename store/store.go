// Package store defines the persistence contract of the identity library:
// the Store and Tx interfaces and the records they hold.
//
// A Store persists records and guarantees atomicity and isolation. It never
// decides a business rule: whether a username is taken, whether a workspace
// has too many claim mappers, or whether a value is too long is decided by
// the identity package, which reads before it writes inside one Update
// transaction. Because Update is serializable, such a read-then-write rule
// holds under any number of concurrent callers.
//
// Times are kept to the microsecond and returned in UTC; the identity
// package truncates them before it writes, so a record read back equals the
// record written. Empty slices may come back nil; maps never do.
//
// Every implementation runs the conformance suite in package storetest,
// and the identity package's rules over it with package identitytest.
//
// RunView and RunUpdate are the front every implementation puts before
// its transactions (as database/sql is before its drivers): they refuse a
// write in a View (ErrReadOnly) and any use of a Tx after its function
// returned (ErrTxDone), so that no implementation repeats those checks.
package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Errors returned by every Store implementation. Implementations may wrap
// them; callers test with errors.Is.
var (
	// ErrNotFound reports that a record (or the workspace it would belong to)
	// does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict reports that a write would give a unique index (username,
	// email) two records. The identity package checks uniqueness before it
	// writes, so this is a safety net, not the normal path.
	ErrConflict = errors.New("store: unique index conflict")
	// ErrReadOnly reports a write attempted inside a View transaction.
	ErrReadOnly = errors.New("store: write in a read-only transaction")
	// ErrTxDone reports use of a Tx after the function it was passed to
	// returned.
	ErrTxDone = errors.New("store: transaction used after it ended")
	// ErrClosed reports use of a Store after Close.
	ErrClosed = errors.New("store: closed")
)

// Store is a transactional record store.
//
// Both methods check ctx before they begin and return ctx.Err() if it is
// already done; a transaction that has begun runs to its end.
type Store interface {
	// View runs fn in a read-only transaction that sees one consistent
	// snapshot. Writes inside fn return ErrReadOnly. The Tx must not be used
	// after fn returns; records it returned are copies the caller owns.
	View(ctx context.Context, fn func(Tx) error) error

	// Update runs fn in a serializable read-write transaction. If fn returns
	// nil the transaction commits, and it is durable when Update returns nil.
	// If fn returns an error (or panics) nothing fn wrote is kept and Update
	// returns that error unchanged.
	//
	// An implementation may group concurrent Updates into one commit and may
	// therefore call fn more than once (for example alone again after a
	// group it was part of failed). fn must have no effect outside the Tx
	// except assigning variables that it assigns afresh on every call.
	Update(ctx context.Context, fn func(Tx) error) error

	// Close releases the store. Calls after Close return ErrClosed.
	Close() error
}

// Tx is one transaction: the records and the queue of jobs, which one
// transaction spans so that a change and the jobs it queues (the outbox)
// commit or roll back together. Every method that names a workspace
// returns ErrNotFound when the workspace does not exist. Records passed in
// are not retained; records returned are copies.
//
// What the front guarantees. A store passes its transactions to fn through
// RunView and RunUpdate, which enforce the lifecycle once for every
// store: a write method of a View transaction returns ErrReadOnly, and any
// method called after fn returned returns ErrTxDone, before the store's
// own method runs. An implementation therefore never checks either; it
// states only its own work. The front also passes PutWebhook, PutRole
// and PutGroup only a positive id (ids come from NextID), PutOAuthClient, PutSigningKey,
// PutAuthRequest, PutGrant and PutRefreshToken only a non-empty id (a key
// every store can hold), PutRefreshToken only a non-empty GrantID,
// PutLoginAttempts, PutSecondFactor, PutPasskey and PutPasskeyHandle
// only a positive UserID (PutPasskey only a non-empty ID, and
// PutPasskeyHandle only a non-empty Handle), and
// PutDelivery only a well-formed job: Kind JobWebhook with a positive
// EndpointID and UserID 0, or JobMail with EndpointID 0 and a UserID
// that is not negative. So no endpoint shares EndpointID 0 with the mail
// jobs, and a store may tell the kinds apart by it.
//
// Each method is marked //guard:read or //guard:write at the end of its
// line: the front's forwarding methods (guard.go) are generated from
// these interfaces with go generate, and the marker says whether a method
// is refused in a View. A method without one stops the generator, so a
// new method is classified where it is declared.
type Tx interface {
	Records
	Queue
}

// Records are the stored records of workspaces and what belongs to them.
type Records interface {
	// PutWorkspace creates the workspace (and its empty namespace) or
	// replaces its record.
	PutWorkspace(w Workspace) error //guard:write
	// Workspace returns the workspace with the slug.
	Workspace(slug string) (Workspace, error) //guard:read
	// Workspaces returns every workspace in ascending slug order.
	Workspaces() ([]Workspace, error) //guard:read
	// NextID returns the next value of the workspace's sequence seq: 1 for
	// the first call, then strictly increasing. A value is never returned
	// again by a later committed transaction.
	NextID(slug string, seq Sequence) (int64, error) //guard:write

	// PutUser inserts or replaces the user with u.ID and keeps the indexes
	// in step: username and email (unique, case-insensitive by Fold) and the
	// full name (for prefix search). If Fold(u.Username) or Fold(u.Email)
	// already belongs to another user it returns ErrConflict and writes
	// nothing.
	PutUser(slug string, u User) error //guard:write
	// User returns the user with the id.
	User(slug string, id int64) (User, error) //guard:read
	// UserIDByUsername returns the id of the user whose Fold(Username)
	// equals Fold(username).
	UserIDByUsername(slug, username string) (int64, error) //guard:read
	// UserIDByEmail returns the id of the user whose Fold(Email) equals
	// Fold(email).
	UserIDByEmail(slug, email string) (int64, error) //guard:read
	// Users returns one page of users in ascending id order and the number
	// of users that match q in all. See UserQuery.
	Users(slug string, q UserQuery) (users []User, total int, err error) //guard:read

	// UserRoles returns the user's directly assigned role ids, ascending.
	UserRoles(slug string, userID int64) ([]int64, error) //guard:read
	// AddUserRole records the role as directly assigned; adding it again is
	// not an error.
	AddUserRole(slug string, userID, roleID int64) error //guard:write
	// RemoveUserRole removes a directly assigned role, or returns
	// ErrNotFound if it is not assigned.
	RemoveUserRole(slug string, userID, roleID int64) error //guard:write

	// Roles and groups. A store keeps their records, their names' indexes
	// and who holds what; it checks no reference (that a role, group or
	// user named exists), which the identity package does. What a user
	// holds is kept in step by every method that changes it: AddUserRole,
	// RemoveUserRole, AddGroupMember, RemoveGroupMember, AddGroupRole,
	// RemoveGroupRole, DeleteRole, DeleteGroup and DeleteUser.
	//
	// A store indexes membership both ways (the members of a group, the
	// groups of a user) and the holders of each role, directly or through
	// a group, so that GroupMembers and RoleHolders cost in proportion to
	// the page and its offset, with their totals kept as counts, never in
	// proportion to the members or holders (memstore, built for tests,
	// scans).

	// PutRole creates or replaces the role with r.ID and keeps the index of
	// names (unique, case-insensitive by Fold) in step. If Fold(r.Name)
	// belongs to another role it returns ErrConflict and writes nothing.
	PutRole(slug string, r Role) error //guard:write
	// Role returns the role with the id.
	Role(slug string, id int64) (Role, error) //guard:read
	// RoleIDByName returns the id of the role whose Fold(Name) equals
	// Fold(name).
	RoleIDByName(slug, name string) (int64, error) //guard:read
	// Roles returns one page of the roles that match q, in ascending id
	// order, and the number of them in all.
	Roles(slug string, q NameQuery) (roles []Role, total int, err error) //guard:read
	// DeleteRole removes the role, its direct assignments to users, its
	// assignments to groups and what users held through them, or returns
	// ErrNotFound.
	DeleteRole(slug string, id int64) error //guard:write

	// PutGroup creates or replaces the group with g.ID and keeps the
	// index of names in step, as PutRole does for roles.
	PutGroup(slug string, g Group) error //guard:write
	// Group returns the group with the id.
	Group(slug string, id int64) (Group, error) //guard:read
	// GroupIDByName returns the id of the group whose Fold(Name) equals
	// Fold(name).
	GroupIDByName(slug, name string) (int64, error) //guard:read
	// Groups returns one page of the groups that match q, in ascending id
	// order, and the number of them in all.
	Groups(slug string, q NameQuery) (groups []Group, total int, err error) //guard:read
	// DeleteGroup removes the group, its memberships, its roles and what
	// its members held through it, or returns ErrNotFound.
	DeleteGroup(slug string, id int64) error //guard:write

	// AddGroupMember makes the user a member of the group; adding a member
	// again is not an error.
	AddGroupMember(slug string, groupID, userID int64) error //guard:write
	// RemoveGroupMember ends the user's membership of the group, or returns
	// ErrNotFound when the user is not a member.
	RemoveGroupMember(slug string, groupID, userID int64) error //guard:write
	// GroupMembers returns one page of the ids of the group's members in
	// ascending order (skip offset, at most limit; limit <= 0 means none)
	// and the number of its members in all.
	GroupMembers(slug string, groupID int64, offset, limit int) (userIDs []int64, total int, err error) //guard:read
	// UserGroups returns the ids of the groups the user is a member of,
	// ascending.
	UserGroups(slug string, userID int64) ([]int64, error) //guard:read

	// AddGroupRole makes the group carry the role; adding it again is not
	// an error.
	AddGroupRole(slug string, groupID, roleID int64) error //guard:write
	// RemoveGroupRole ends the group's role, or returns ErrNotFound when
	// the group does not carry it.
	RemoveGroupRole(slug string, groupID, roleID int64) error //guard:write
	// GroupRoles returns the ids of the roles the group carries,
	// ascending.
	GroupRoles(slug string, groupID int64) ([]int64, error) //guard:read

	// RoleHolders returns one page of the ids of the users who hold the
	// role, directly (AddUserRole) or as members of a group that carries
	// it, each once, in ascending order (skip offset, at most limit;
	// limit <= 0 means none), and the number of them in all.
	RoleHolders(slug string, roleID int64, offset, limit int) (userIDs []int64, total int, err error) //guard:read

	// UserAttributes returns the user's attributes (an empty, non-nil map
	// when there are none).
	UserAttributes(slug string, userID int64) (map[string]string, error) //guard:read
	// PutUserAttribute creates or replaces one attribute.
	PutUserAttribute(slug string, userID int64, key, value string) error //guard:write
	// DeleteUserAttribute removes one attribute, or returns ErrNotFound.
	DeleteUserAttribute(slug string, userID int64, key string) error //guard:write
	// UsersByAttribute returns one page of the users whose attribute
	// q.Key has exactly the value q.Value (compared byte for byte, no
	// folding), in ascending id order, and the number of them in all. A
	// store indexes attributes by key and value, so that the cost follows
	// the page and the offset (and, where the store counts its index
	// entries for the total, as PostgreSQL does, the users with the
	// value), never the number of users.
	UsersByAttribute(slug string, q AttributeQuery) (users []User, total int, err error) //guard:read

	// ClaimMappers returns the workspace's mappers in ascending
	// AttributeKey order.
	ClaimMappers(slug string) ([]ClaimMapper, error) //guard:read
	// PutClaimMapper creates or replaces the mapper for m.AttributeKey.
	PutClaimMapper(slug string, m ClaimMapper) error //guard:write
	// DeleteClaimMapper removes the mapper, or returns ErrNotFound.
	DeleteClaimMapper(slug, attributeKey string) error //guard:write

	// PutWebhook creates or replaces the endpoint with w.ID.
	PutWebhook(slug string, w Webhook) error //guard:write
	// Webhook returns the endpoint with the id.
	Webhook(slug string, id int64) (Webhook, error) //guard:read
	// Webhooks returns one page of endpoints in ascending id order (skip
	// offset, at most limit) and the number of endpoints in all.
	Webhooks(slug string, offset, limit int) (hooks []Webhook, total int, err error) //guard:read
	// WebhooksForEvent returns the endpoints (enabled or not) whose Events
	// hold eventType, in ascending id order. A store keeps an index by
	// event type in step with PutWebhook and DeleteWebhook, so that an
	// event costs in proportion to the endpoints subscribed to it, not to
	// the workspace's endpoints (memstore, built for tests, scans).
	WebhooksForEvent(slug, eventType string) ([]Webhook, error) //guard:read
	// DeleteWebhook removes the endpoint and every delivery of it (with
	// their due-index entries), or returns ErrNotFound.
	DeleteWebhook(slug string, id int64) error //guard:write

	// PutSession creates or replaces the session with s.ID and keeps the
	// per-user index in step.
	PutSession(slug string, s Session) error //guard:write
	// Session returns the session with the id.
	Session(slug, id string) (Session, error) //guard:read
	// UserSessions returns every session of the user (active, expired and
	// revoked) in ascending CreatedAt order, ties by id.
	UserSessions(slug string, userID int64) ([]Session, error) //guard:read
	// UserSessionsPage returns one page of the user's sessions in the
	// order of UserSessions (skip offset, at most limit; limit <= 0 means
	// none) and the number of the user's sessions in all. A page costs
	// what it returns plus a walk of the keys before it, never reading
	// the records it skips.
	UserSessionsPage(slug string, userID int64, offset, limit int) (sessions []Session, total int, err error) //guard:read

	// PutAPIKey creates or replaces the key record with k.ID. The
	// workspace k.Workspace must exist.
	PutAPIKey(k APIKey) error //guard:write
	// APIKey returns the key record with the id, whatever its workspace.
	APIKey(id string) (APIKey, error) //guard:read
	// APIKeys returns the workspace's key records in ascending id order.
	APIKeys(slug string) ([]APIKey, error) //guard:read
	// DeleteAPIKey removes the key record, or returns ErrNotFound.
	DeleteAPIKey(id string) error //guard:write

	// PutOAuthClient creates or replaces the OAuth client with c.ID in the
	// workspace. Client ids are unique within a workspace only.
	PutOAuthClient(slug string, c OAuthClient) error //guard:write
	// OAuthClient returns the workspace's OAuth client with the id.
	OAuthClient(slug, id string) (OAuthClient, error) //guard:read
	// OAuthClients returns the workspace's OAuth clients in ascending id
	// order (byte order, as Go compares strings).
	OAuthClients(slug string) ([]OAuthClient, error) //guard:read
	// DeleteOAuthClient removes the OAuth client, or returns ErrNotFound.
	DeleteOAuthClient(slug, id string) error //guard:write

	// PutSigningKey creates or replaces the workspace's token signing key
	// with k.ID.
	PutSigningKey(slug string, k SigningKey) error //guard:write
	// SigningKeys returns the workspace's signing keys (every state) in
	// ascending CreatedAt order, ties by id.
	SigningKeys(slug string) ([]SigningKey, error) //guard:read
	// DeleteSigningKey removes the signing key, or returns ErrNotFound.
	DeleteSigningKey(slug, id string) error //guard:write

	// PutAuthRequest creates or replaces the authorization request with
	// r.ID.
	PutAuthRequest(slug string, r AuthRequest) error //guard:write
	// AuthRequest returns the authorization request with the id.
	AuthRequest(slug, id string) (AuthRequest, error) //guard:read

	// PutGrant creates or replaces the grant with g.ID and keeps the
	// per-user index in step (a grant with UserID 0 belongs to no user).
	PutGrant(slug string, g Grant) error //guard:write
	// Grant returns the grant with the id.
	Grant(slug, id string) (Grant, error) //guard:read
	// UserGrants returns every grant of the user (active, expired and
	// revoked) in ascending CreatedAt order, ties by id.
	UserGrants(slug string, userID int64) ([]Grant, error) //guard:read

	// PutRefreshToken creates or replaces the refresh token with t.ID.
	PutRefreshToken(slug string, t RefreshToken) error //guard:write
	// RefreshToken returns the refresh token with the id.
	RefreshToken(slug, id string) (RefreshToken, error) //guard:read

	// PutLoginAttempts creates or replaces the lockout state of the user
	// a.UserID.
	PutLoginAttempts(slug string, a LoginAttempts) error //guard:write
	// LoginAttempts returns the lockout state of the user, or ErrNotFound
	// when none was ever stored.
	LoginAttempts(slug string, userID int64) (LoginAttempts, error) //guard:read

	// PutSecondFactor creates or replaces the second factor of the user
	// f.UserID.
	PutSecondFactor(slug string, f SecondFactor) error //guard:write
	// SecondFactor returns the user's second factor, or ErrNotFound when
	// it has none.
	SecondFactor(slug string, userID int64) (SecondFactor, error) //guard:read
	// DeleteSecondFactor removes the user's second factor, or returns
	// ErrNotFound when it has none.
	DeleteSecondFactor(slug string, userID int64) error //guard:write

	// PutPasskey creates or replaces the passkey with p.ID (its credential
	// id) and keeps the per-user index in step: a passkey replaced with
	// another UserID leaves its former user's index.
	PutPasskey(slug string, p Passkey) error //guard:write
	// Passkey returns the workspace's passkey with the credential id.
	Passkey(slug, id string) (Passkey, error) //guard:read
	// UserPasskeys returns the user's passkeys in ascending CreatedAt
	// order, ties by id; none is an empty slice (or nil), not an error.
	UserPasskeys(slug string, userID int64) ([]Passkey, error) //guard:read
	// DeletePasskey removes the passkey with its index entry, or returns
	// ErrNotFound.
	DeletePasskey(slug, id string) error //guard:write
	// PutPasskeyHandle creates or replaces the WebAuthn user handle of the
	// user h.UserID and keeps the index by handle in step. If h.Handle
	// already belongs to another user of the workspace it returns
	// ErrConflict and writes nothing.
	PutPasskeyHandle(slug string, h PasskeyHandle) error //guard:write
	// PasskeyHandle returns the user's handle, or ErrNotFound when the
	// user has none.
	PasskeyHandle(slug string, userID int64) (PasskeyHandle, error) //guard:read
	// UserIDByPasskeyHandle returns the id of the user whose handle is
	// handle (compared byte for byte).
	UserIDByPasskeyHandle(slug string, handle []byte) (int64, error) //guard:read

	// PutVerificationToken creates or replaces the token with t.ID.
	PutVerificationToken(slug string, t VerificationToken) error //guard:write
	// VerificationToken returns the token with the id.
	VerificationToken(slug, id string) (VerificationToken, error) //guard:read

	// PutAsset creates or replaces the workspace's asset a.Name.
	PutAsset(slug string, a Asset) error //guard:write
	// Asset returns the workspace's asset with the name.
	Asset(slug, name string) (Asset, error) //guard:read
	// DeleteAsset removes the asset, or returns ErrNotFound.
	DeleteAsset(slug, name string) error //guard:write

	// DeleteUser removes the user with the id and every record a store
	// keeps under the user's id, in this transaction: the user record and
	// its index entries (username, email, full name, the counts behind
	// Users), its roles and attributes, its group memberships (both
	// ways) and what it held through them, its sessions, its grants (UserID
	// id) and every refresh token of them, its authorization requests
	// (UserID id), its single-use tokens (VerificationToken.UserID id), its
	// lockout state, its second factor, its passkeys and passkey handle
	// (with their index entries), and its mail jobs (Delivery.UserID id)
	// with their due-index entries. It returns ErrNotFound, and
	// removes nothing, when there is no such user. Webhook jobs are not the
	// user's (their payloads are the events' own) and stay; so do records
	// that name no user (a grant with UserID 0, an authorization request
	// nobody has signed in to yet). Audit records stay too: the identity
	// package rewrites those that name the user (PutAuditRecord).
	//
	// A store finds these through indexes by user (and by grant for
	// refresh tokens) rather than by scanning a workspace's records, so
	// that the cost is in proportion to what the user has; memstore, built
	// for tests, scans some and says so.
	DeleteUser(slug string, id int64) error //guard:write
	// DeleteWorkspace removes the workspace and everything that belongs to
	// it, in this transaction: its record, sequences, users and all that
	// DeleteUser removes, roles and groups, claim mappers, webhooks and
	// every job of the
	// queue (with their due-index entries, so that DueDeliveries,
	// NextDueAt and PendingDeliveries no longer count them), API keys
	// (APIKey no longer finds them), OAuth clients, signing keys,
	// authorization requests, grants, refresh tokens, single-use tokens,
	// lockout states, second factors, passkeys and passkey handles, assets, idempotency records and its
	// audit trail. It returns ErrNotFound when the workspace does not exist. A workspace created
	// again with the slug starts empty, its sequences at 1.
	DeleteWorkspace(slug string) error //guard:write

	// PutIdempotency creates or replaces the record for (r.Workspace,
	// r.Scope, r.Key). The workspace must exist.
	PutIdempotency(r IdempotencyRecord) error //guard:write
	// Idempotency returns the record for the key, expired or not.
	Idempotency(slug, scope, key string) (IdempotencyRecord, error) //guard:read
	// DeleteIdempotency removes the record, or returns ErrNotFound.
	DeleteIdempotency(slug, scope, key string) error //guard:write
	// DeleteExpiredIdempotency removes up to limit records of any
	// workspace whose ExpiresAt is at or before now, earliest ExpiresAt
	// first, and returns how many it removed.
	DeleteExpiredIdempotency(now time.Time, limit int) (int, error) //guard:write

	// DeleteEndedSessions removes up to limit sessions of the workspace
	// whose EndedAt is at or before before, earliest first, with their
	// per-user index entries, and returns how many it removed.
	DeleteEndedSessions(slug string, before time.Time, limit int) (int, error) //guard:write
	// DeleteExpiredTokens removes up to limit records of the workspace
	// whose ExpiresAt is at or before before: single-use tokens (every
	// purpose), authorization requests, refresh tokens and grants (a
	// grant's refresh tokens go with it and count), with every index
	// entry of theirs (per user, per grant), and returns how many it
	// removed. Used or not does not matter: what expired is removed. It
	// removes single-use tokens first, then authorization requests,
	// refresh tokens and grants, each kind earliest ExpiresAt first.
	DeleteExpiredTokens(slug string, before time.Time, limit int) (int, error) //guard:write

	// The audit trail. Records are keyed by ID, which the identity
	// package makes time-ordered: ordering by ID is ordering by time, so
	// a store needs no index by time.
	//
	// A store indexes records by actor (ActorKind and ActorID), by target
	// (TargetKind and TargetID), by Action and by Outcome, each entry
	// ordered by ID, so that a page of AuditRecords filtered by any one of
	// them costs in proportion to the page, never to the records of the
	// workspace (memstore, built for tests, scans).

	// PutAuditRecord creates or replaces the record with r.ID and keeps
	// the indexes in step.
	PutAuditRecord(slug string, r AuditRecord) error //guard:write
	// AuditRecords returns up to q.Limit records that match q, in
	// descending ID order, or ascending when q.Ascending. See AuditQuery.
	AuditRecords(slug string, q AuditQuery) ([]AuditRecord, error) //guard:read
	// DeleteAuditRecords removes up to limit records of the workspace
	// whose ID is below beforeID (they are older than the time it
	// stands for), lowest ID first, with their index entries, and returns
	// how many it removed.
	DeleteAuditRecords(slug string, beforeID string, limit int) (int, error) //guard:write
}

// Queue is the queue of jobs: webhook deliveries and mail jobs, with the
// due index that every workspace's pending jobs share.
type Queue interface {
	// PutDelivery creates or replaces the job with d.ID. The endpoint of a
	// webhook job, d.EndpointID, must exist (ErrNotFound otherwise); a mail
	// job has EndpointID 0 and belongs to no endpoint. The store keeps a
	// due index in step: a pending job is due at d.DueAt().
	PutDelivery(slug string, d Delivery) error //guard:write
	// Delivery returns the delivery with the id.
	Delivery(slug string, id int64) (Delivery, error) //guard:read
	// ClaimDelivery reads the delivery with the id, like Delivery, for a
	// write that follows in this transaction (a dispatcher's lease). It
	// returns false, and no error, when there is no such delivery or
	// another transaction holds it for a write of its own: the caller
	// treats it as taken and moves on instead of waiting. A store whose
	// Update transactions run one at a time never sees a held delivery.
	// It is a write: inside View the front returns ErrReadOnly.
	ClaimDelivery(slug string, id int64) (Delivery, bool, error) //guard:write
	// Deliveries returns every webhook job of the endpoint (pending,
	// succeeded and failed) in ascending id order; none for an unknown
	// endpoint.
	Deliveries(slug string, endpointID int64) ([]Delivery, error) //guard:read
	// MailJobs returns every mail job of the workspace (pending, succeeded
	// and failed) in ascending id order.
	MailJobs(slug string) ([]Delivery, error) //guard:read
	// DeliveriesPage returns one page of the endpoint's webhook jobs in
	// ascending id order (skip offset, at most limit; limit <= 0 means
	// none) and the number of its jobs in all; none for an unknown
	// endpoint. Like UserSessionsPage, a page reads only the records it
	// returns. (Deliveries, MailJobs and UserSessions list in full for
	// the identity package's own work in one transaction: failing an
	// endpoint's pending jobs, revoking a user's sessions, an export.)
	DeliveriesPage(slug string, endpointID int64, offset, limit int) (jobs []Delivery, total int, err error) //guard:read
	// MailJobsPage returns one page of the workspace's mail jobs in
	// ascending id order and the number of them in all, as
	// DeliveriesPage does.
	MailJobsPage(slug string, offset, limit int) (jobs []Delivery, total int, err error) //guard:read
	// DueDeliveries returns up to limit pending deliveries of every
	// workspace whose DueAt is at or before now, in ascending DueAt order
	// (ties in any stable order).
	DueDeliveries(now time.Time, limit int) ([]QueuedDelivery, error) //guard:read
	// NextDueAt returns the earliest DueAt of any pending delivery of any
	// workspace, and false when there is none.
	NextDueAt() (time.Time, bool, error) //guard:read
	// PendingDeliveries counts the pending deliveries of every workspace.
	PendingDeliveries() (int, error) //guard:read
	// WorkspaceQueue reads one workspace's share of the queue (webhook
	// and mail jobs alike) off the due index that DueDeliveries reads,
	// with no index or count of its own that a write would keep: it
	// walks the due index from its start (every workspace's pending jobs
	// in DueAt order) and looks at no more than limit entries (none when
	// limit <= 0). Pending counts the workspace's entries among them and
	// NextDue is the DueAt of the first of them (zero when none), the
	// earliest of the workspace's, as the index is in DueAt order.
	// Complete reports that the walk reached the end of the index: then
	// Pending is exact. Otherwise Pending is a lower bound (the
	// workspace's jobs among the limit earliest due of every workspace),
	// and a zero NextDue means only that the workspace's first job is not
	// among them. It costs at most limit index entries, however many jobs
	// are pending; ErrNotFound for a workspace that does not exist.
	WorkspaceQueue(slug string, limit int) (WorkspaceQueue, error) //guard:read
	// DeleteFinishedDeliveries removes up to limit jobs of the workspace
	// of the kind with the status (DeliverySucceeded or DeliveryFailed;
	// pending jobs are never removed: 0 for DeliveryPending) whose
	// FinishedAt is at or before before, earliest first, with their index
	// entries (per user for mail jobs), and returns how many it removed.
	//
	// A store indexes finished jobs, ended sessions and the records
	// DeleteExpiredTokens removes by that time, so that a sweep costs in
	// proportion to what it removes (memstore, built for tests, scans).
	DeleteFinishedDeliveries(slug string, kind JobKind, status DeliveryStatus, before time.Time, limit int) (int, error) //guard:write
}

// WorkspaceQueue describes the pending jobs of one workspace, as far as
// Tx.WorkspaceQueue's walk of the due index saw them.
type WorkspaceQueue struct {
	// Pending counts the workspace's pending jobs that the walk saw: all
	// of them when Complete, a lower bound otherwise.
	Pending int
	// NextDue is the earliest DueAt of them; zero when the walk saw none.
	NextDue time.Time
	// Complete reports that the walk reached the end of the due index
	// within its limit, so that Pending is exact and a zero NextDue means
	// that none is pending.
	Complete bool
}

// Sequence names a per-workspace id sequence.
type Sequence string

// The sequences the identity package draws ids from.
const (
	SeqUsers      Sequence = "users"
	SeqWebhooks   Sequence = "webhooks"
	SeqDeliveries Sequence = "deliveries"
	// SeqRoles is the sequence of role ids. A store that holds role
	// assignments made before roles were records (when any positive id
	// was a role) starts it past the largest of them (see Role).
	SeqRoles  Sequence = "roles"
	SeqGroups Sequence = "groups"
)

// Fold maps a string to the form under which the case-insensitive indexes
// (username, email, full name) store and compare it. Every Store must fold
// with this function so that all stores agree on what "the same username"
// and "a matching prefix" mean.
func Fold(s string) string { return strings.ToLower(s) }

// UserQuery selects a page of users.
type UserQuery struct {
	// Prefix, when non-empty, keeps only users for which Fold(Prefix) is a
	// prefix of Fold(Username), Fold(Email) or Fold(FullName). It is matched
	// literally: no character has a special meaning. A user who matches on
	// several fields is counted once.
	Prefix string
	// Offset is how many matching users (in ascending id order) to skip.
	Offset int
	// Limit is the most users to return. The identity package validates
	// Offset and Limit; a store treats Limit <= 0 as "none".
	Limit int
}

// AttributeQuery selects a page of the users with one attribute value.
type AttributeQuery struct {
	// Key and Value are the attribute's key and its exact value.
	Key, Value string
	// Offset is how many matching users (in ascending id order) to skip.
	Offset int
	// Limit is the most users to return. The identity package validates
	// Offset and Limit; a store treats Limit <= 0 as "none".
	Limit int
}

// NameQuery selects a page of roles or groups.
type NameQuery struct {
	// Prefix, when non-empty, keeps only the records for which
	// Fold(Prefix) is a prefix of Fold(Name), matched literally.
	Prefix string
	// Offset is how many matching records (in ascending id order) to skip.
	Offset int
	// Limit is the most records to return. The identity package validates
	// Offset and Limit; a store treats Limit <= 0 as "none".
	Limit int
}

// AuditQuery selects records of a workspace's audit trail. Empty fields
// select everything; the fields that are set must all match.
type AuditQuery struct {
	// ActorKind and ActorID, when ActorKind is set, keep the records of
	// that actor (ActorID may be empty: the system's actor has none).
	ActorKind, ActorID string
	// TargetKind and TargetID, when TargetKind is set, keep the records
	// about that target.
	TargetKind, TargetID string
	// Actions, when not empty, keeps the records whose Action is one of
	// them.
	Actions []string
	// Outcome, when set, keeps the records with that Outcome.
	Outcome string
	// After and Before, when set, keep the records whose ID is above
	// After and below Before: the time range and the cursor of a page.
	After, Before string
	// Ascending returns the records oldest (lowest ID) first; the default
	// is newest first.
	Ascending bool
	// Limit is the most records to return; a store treats Limit <= 0 as
	// "none".
	Limit int
}

// Matches reports whether r is one of the records q selects: the
// definition of every field of AuditQuery, which stores apply to the
// records their index walks yield (and memstore to every record).
func (q *AuditQuery) Matches(r *AuditRecord) bool {
	switch {
	case q.After != "" && r.ID <= q.After, q.Before != "" && r.ID >= q.Before:
		return false
	case q.ActorKind != "" && (r.ActorKind != q.ActorKind || r.ActorID != q.ActorID):
		return false
	case q.TargetKind != "" && (r.TargetKind != q.TargetKind || r.TargetID != q.TargetID):
		return false
	case len(q.Actions) > 0 && !slices.Contains(q.Actions, r.Action):
		return false
	case q.Outcome != "" && r.Outcome != q.Outcome:
		return false
	}
	return true
}

// AuditRecord is the stored form of one record of the audit trail: who
// (the actor) did what (the action) to whom (the target), with what
// outcome, from where, and what changed. The identity package decides
// every field; a store keeps them as given, Changes as opaque bytes.
type AuditRecord struct {
	// ID is unique and time-ordered (see Records).
	ID           string
	Time         time.Time
	ActorKind    string
	ActorID      string
	ActorDisplay string
	Action       string
	TargetKind   string
	TargetID     string
	// TargetDisplay is the target's name when it was written.
	TargetDisplay string
	Outcome       string
	Reason        string
	Address       string
	UserAgent     string
	RequestID     string
	// Changes is owned and encoded by the identity package.
	Changes []byte
}

// Role is the stored form of a role of a workspace.
//
// Before roles were records, a role was any positive id assigned to a
// user. A store opened on data of that time gives every role id assigned
// to a user of a workspace a record with that id, named "role-" and the
// id in decimal, created at the time of the upgrade, with Version 1, and
// starts SeqRoles past the largest, so that no id is used twice.
type Role struct {
	ID          int64
	Name        string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Version is set by the identity package and changes on every write
	// of the record; stores keep it as given.
	Version int64
}

// Group is the stored form of a group of a workspace: a flat, named set of
// users that carries roles.
type Group struct {
	ID          int64
	Name        string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Version is set by the identity package and changes on every write
	// of the record; stores keep it as given.
	Version int64
}

// Workspace is the record of one workspace.
type Workspace struct {
	Slug      string
	CreatedAt time.Time
	// Settings is owned and encoded by the identity package; stores keep it
	// as opaque bytes.
	Settings []byte
}

// User is the stored form of a user.
type User struct {
	ID            int64
	Username      string
	Email         string
	FullName      string
	EmailVerified bool
	Enabled       bool
	MFAEnabled    bool
	// PasswordHash is an encoded password hash (PHC string, bcrypt or
	// PBKDF2 encodings), or empty when the user has no password.
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// Version is set by the identity package and changes on every write
	// of the record; stores keep it as given.
	Version int64
}

// ClaimMapper is the stored form of a claim mapper.
type ClaimMapper struct {
	AttributeKey    string
	ClaimName       string
	IncludeInAccess bool
	IncludeInID     bool
	// Version is set by the identity package and changes on every write
	// of the record; stores keep it as given.
	Version int64
}

// Webhook is the stored form of a webhook endpoint, secret included.
type Webhook struct {
	ID          int64
	URL         string
	Description string
	Events      []string
	Enabled     bool
	CreatedAt   time.Time
	Secret      string
	// FailingSince is when the endpoint's deliveries started failing
	// without a success since; zero while they succeed.
	FailingSince time.Time
	// Version is set by the identity package and changes on every write
	// of the record; stores keep it as given.
	Version int64
}

// DeliveryStatus is the state of a delivery.
type DeliveryStatus string

// The delivery states. Only pending deliveries are ever due.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
)

// JobKind is what a job of the queue does when it is attempted.
type JobKind string

// The kinds of job. Everything about the queue (due index, leases, the
// pending count) is the same for both.
const (
	// JobWebhook is an event for one webhook endpoint: an HTTP request.
	JobWebhook JobKind = "webhook"
	// JobMail is an email the identity package sends (a verification
	// email). It belongs to no endpoint.
	JobMail JobKind = "mail"
)

// Delivery is one job of the queue, with its attempts: an event for one
// webhook endpoint (Kind JobWebhook) or an email (Kind JobMail).
type Delivery struct {
	ID   int64
	Kind JobKind
	// EndpointID is the webhook endpoint of a webhook job; 0 for a mail
	// job.
	EndpointID int64
	// UserID is the user a mail job is about, as the identity package
	// sets it (0 for none); DeleteUser removes the user's mail jobs by it,
	// so a store indexes mail jobs by UserID. A webhook job has 0: it
	// belongs to no user.
	UserID int64
	// EventID identifies the event; it is the same for every endpoint the
	// event fans out to and stays the same across retries.
	EventID   string
	EventType string
	// Payload is the request body as it will be sent.
	Payload   []byte
	CreatedAt time.Time
	Status    DeliveryStatus
	// Attempts counts the attempts made so far.
	Attempts int
	// NextAttemptAt is when the next attempt is due (pending only).
	NextAttemptAt time.Time
	// LeaseUntil, while in the future, means a dispatcher has claimed the
	// delivery for an attempt; if it never reports back, the delivery
	// becomes due again when the lease ends.
	LeaseUntil time.Time
	// LeaseOwner identifies the dispatcher holding the lease.
	LeaseOwner string
	// LastAttemptAt, LastStatus (HTTP status, 0 when none was received)
	// and LastError describe the most recent attempt.
	LastAttemptAt time.Time
	LastStatus    int
	LastError     string
}

// DueAt is when a pending delivery is next due: its NextAttemptAt, or the
// end of its lease when that is later.
func (d Delivery) DueAt() time.Time {
	if d.LeaseUntil.After(d.NextAttemptAt) {
		return d.LeaseUntil
	}
	return d.NextAttemptAt
}

// FinishedAt is when a succeeded or failed job finished: its
// LastAttemptAt, or its CreatedAt when it was never attempted. It is
// what DeleteFinishedDeliveries compares.
func (d Delivery) FinishedAt() time.Time {
	if d.LastAttemptAt.IsZero() {
		return d.CreatedAt
	}
	return d.LastAttemptAt
}

// Asset is a file a workspace serves, such as its logo: bytes with their
// media type, under a name the identity package chooses. What the bytes
// hold is the identity package's business; a store keeps them as given.
type Asset struct {
	Name        string
	ContentType string
	Data        []byte
	UpdatedAt   time.Time
}

// QueuedDelivery is a delivery with the slug of its workspace.
type QueuedDelivery struct {
	Workspace string
	Delivery
}

// Session is a login session of a user. The session token is never
// stored, only a hash of its secret part.
type Session struct {
	ID         string
	UserID     int64
	SecretHash []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastSeenAt time.Time
	// RevokedAt is zero while the session has not been revoked.
	RevokedAt time.Time
	// UserAgent and Address are the User-Agent header and the client
	// address of the request that started the session, as the identity
	// package bounded them; empty when it did not know them.
	UserAgent string
	Address   string
	// AMR is how the user authenticated when the session started (RFC
	// 8176 values, such as "pwd" and "otp"), in the order given.
	AMR []string
}

// EndedAt is when the session ended or will end: its RevokedAt when it
// was revoked before it expired, its ExpiresAt otherwise. It is what
// DeleteEndedSessions compares.
func (s Session) EndedAt() time.Time {
	if !s.RevokedAt.IsZero() && s.RevokedAt.Before(s.ExpiresAt) {
		return s.RevokedAt
	}
	return s.ExpiresAt
}

// APIKey is the stored form of an API key: never the key itself, only a
// hash of its secret part.
type APIKey struct {
	// ID is the public identifier embedded in the key.
	ID         string
	Workspace  string
	Name       string
	Scopes     []string
	SecretHash []byte
	CreatedAt  time.Time
}

// OAuthClient is the stored form of an OAuth client of a workspace: never
// its secret, only a hash of it.
type OAuthClient struct {
	// ID is the client_id, unique within the workspace.
	ID                     string
	Name                   string
	Public                 bool
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	GrantTypes             []string
	// Claims are the claims of the user's access that the client's tokens
	// carry whatever scopes it asks for ("groups", "roles"); empty for
	// none.
	Claims []string
	// SecretHash is empty for a public client, which has no secret.
	SecretHash []byte
	CreatedAt  time.Time
}

// TokenPurpose is what a single-use token (VerificationToken) is for.
type TokenPurpose string

// The purposes of single-use tokens.
const (
	// PurposeVerifyEmail is an email verification token.
	PurposeVerifyEmail TokenPurpose = ""
	// PurposePasswordReset is a password reset token.
	PurposePasswordReset TokenPurpose = "password_reset"
	// PurposeSecondFactor is a sign-in that passed its password and waits
	// for a second factor.
	PurposeSecondFactor TokenPurpose = "second_factor"
	// PurposePasskeyRegistration is the state of a passkey registration.
	PurposePasskeyRegistration TokenPurpose = "passkey_registration"
	// PurposePasskeySignIn is the state of a passkey sign-in; it may name
	// no user (UserID 0).
	PurposePasskeySignIn TokenPurpose = "passkey_sign_in"
	// PurposePasskeyEnrollment is a sign-in that passed its password and
	// waits for the user to register a passkey.
	PurposePasskeyEnrollment TokenPurpose = "passkey_enrollment"
	// PurposePasskeyEnrollmentTOTP is PurposePasskeyEnrollment for a
	// sign-in that passed a TOTP code too.
	PurposePasskeyEnrollmentTOTP TokenPurpose = "passkey_enrollment_totp"
	// PurposePasskeyEnrollmentRecoveryCode is PurposePasskeyEnrollment for
	// a sign-in that passed a recovery code too.
	PurposePasskeyEnrollmentRecoveryCode TokenPurpose = "passkey_enrollment_recovery_code"
)

// VerificationToken is a single-use token: email verification, password
// reset or a sign-in waiting for its second factor. Only a hash of its
// secret part is stored.
type VerificationToken struct {
	ID     string
	UserID int64
	// Email is the address the token was sent to; it verifies that
	// address only.
	Email      string
	SecretHash []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time
	// UsedAt is zero until the token has been used.
	UsedAt time.Time
	// Purpose says what the token is for: PurposeVerifyEmail (the zero
	// value, so tokens stored before purposes existed keep theirs),
	// PurposePasswordReset or PurposeSecondFactor. A store keeps it as given.
	Purpose TokenPurpose
}

// IdempotencyRecord is a request made with an idempotency key and, once it
// has completed, its outcome.
type IdempotencyRecord struct {
	Workspace string
	// Scope separates callers that may pick the same key (the REST adapter
	// uses the API key id).
	Scope string
	Key   string
	// Fingerprint identifies the request's content (opaque to stores).
	Fingerprint []byte
	CreatedAt   time.Time
	// ExpiresAt is when the record stops counting and may be swept.
	ExpiresAt time.Time
	// Done is false while the first request is still running: it holds
	// the key until LockedUntil.
	Done        bool
	LockedUntil time.Time
	// Result is the outcome, encoded by the identity package (opaque to
	// stores).
	Result []byte
}

// SigningKey is a workspace's key for signing tokens. Its state, its
// times and the encoding of its private key are the identity package's
// business; a store keeps them as given.
type SigningKey struct {
	// ID is the key id (the JWS "kid"), unique within the workspace.
	ID string
	// Algorithm is the JWS algorithm ("RS256", "ES256").
	Algorithm string
	// State is "next", "active" or "retired".
	State string
	// PrivateKey is the private key as the identity package encoded it
	// (sealed when the program supplied a key-encryption key).
	PrivateKey []byte
	// PublicKey is the public key, PKIX DER.
	PublicKey []byte
	CreatedAt time.Time
	// ActivatedAt is when the key started signing; zero while next.
	ActivatedAt time.Time
	// RetiredAt is when the key stopped signing; zero until retired.
	RetiredAt time.Time
	// RemoveAt is when a retired key stops being published: every token
	// it signed has expired by then. Zero until retired.
	RemoveAt time.Time
}

// AuthRequest is an OAuth authorization request from the moment a client
// sends the user to the provider until its code is redeemed. Only a hash
// of the code's secret part is stored.
type AuthRequest struct {
	ID                  string
	ClientID            string
	RedirectURI         string
	Scopes              []string
	State               string
	Nonce               string
	CodeChallenge       string
	CodeChallengeMethod string
	// Prompt is the request's prompt values, space-separated.
	Prompt string
	// UILocales is the request's ui_locales: language tags,
	// space-separated, the preferred first.
	UILocales string
	CreatedAt time.Time
	// ExpiresAt is when the request (or, once it has a code, the code)
	// expires.
	ExpiresAt time.Time
	// UserID, SessionID, AuthTime and AMR are set once the user has
	// signed in.
	UserID    int64
	SessionID string
	AuthTime  time.Time
	AMR       []string
	// CodeHash is the hash of the code's secret; empty until a code is
	// issued.
	CodeHash []byte
	// UsedAt is zero until the code is redeemed; GrantID is the grant the
	// redemption created.
	UsedAt  time.Time
	GrantID string
}

// Grant is what a user (or, with UserID 0, a client on its own behalf)
// authorized a client to do: the family of tokens issued from one
// authorization. Revoking it revokes every token of the family.
type Grant struct {
	ID        string
	ClientID  string
	UserID    int64
	SessionID string
	Scopes    []string
	AuthTime  time.Time
	// AMR is how the user authenticated for the grant, as its session
	// recorded it; empty for a client's own grant.
	AMR       []string
	CreatedAt time.Time
	// ExpiresAt is the absolute end of the family: no token of it lives
	// longer.
	ExpiresAt time.Time
	// RevokedAt is zero while the grant has not been revoked; Reason says
	// why it was.
	RevokedAt    time.Time
	RevokeReason string
}

// RefreshToken is one refresh token of a grant. Only a hash of its secret
// part is stored.
type RefreshToken struct {
	ID         string
	GrantID    string
	SecretHash []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time
	// UsedAt is zero until the token has been exchanged for its
	// successor.
	UsedAt time.Time
	// SuccessorID is the id of the token its exchange issued; empty until
	// then.
	SuccessorID string
}

// LoginAttempts is the lockout state of one user: the failed password
// attempts counted toward the workspace's lockout threshold, the attempts
// whose verification is in flight, and the lock. What the numbers mean is
// the identity package's business; a store keeps them as given.
type LoginAttempts struct {
	UserID int64
	// Failures counts consecutive failed attempts.
	Failures int
	// Pending holds, for each attempt reserved and not yet released, the
	// time its reservation lapses (ascending or not: as written).
	Pending []time.Time
	// LockedUntil is when the lock ends; zero when the user was never
	// locked or was unlocked.
	LockedUntil time.Time
}

// SecondFactor is a user's TOTP second factor: confirmed, or an enrolment
// waiting for its first code. What the fields mean is the identity
// package's business; a store keeps them as given.
type SecondFactor struct {
	UserID int64
	// Secret is the TOTP secret as the identity package encodes it (sealed
	// when it has a key-encryption key); opaque bytes to a store.
	Secret []byte
	// Confirmed is false while the enrolment waits for its first code.
	Confirmed bool
	CreatedAt time.Time
	// ConfirmedAt is zero until the enrolment is confirmed.
	ConfirmedAt time.Time
	// LastStep is the TOTP time step of the last code accepted (0 for none):
	// a code of that step or an earlier one is refused (replay).
	LastStep int64
	// RecoveryCodes are the hashes of the unused recovery codes (each a
	// byte slice; order as written).
	RecoveryCodes [][]byte
}

// Passkey is a user's WebAuthn credential (a passkey). What the fields
// mean is the identity package's business; a store keeps them as given
// and finds a passkey by (workspace, ID) and by its user.
type Passkey struct {
	// ID is the credential id, base64url without padding: unique within
	// the workspace.
	ID     string
	UserID int64
	// Name is the name its user gave it.
	Name string
	// PublicKey is the credential public key, COSE_Key encoded.
	PublicKey []byte
	// SignCount is the authenticator's signature counter as last seen.
	SignCount int64
	// AAGUID is the authenticator model's AAGUID (16 bytes; zeros when the
	// authenticator did not say).
	AAGUID         []byte
	BackupEligible bool
	BackupState    bool
	CreatedAt      time.Time
	// LastUsedAt is zero until the passkey signs a user in.
	LastUsedAt time.Time
}

// PasskeyHandle is a user's WebAuthn user handle: random bytes the
// identity package makes, unique within the workspace.
type PasskeyHandle struct {
	UserID    int64
	Handle    []byte
	CreatedAt time.Time
}
