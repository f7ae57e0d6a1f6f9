package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// Top-level bucket names.
var (
	bucketWorkspaces  = []byte("workspaces")
	bucketAPIKeys     = []byte("apikeys")
	bucketSpaces      = []byte("ws")
	bucketDeliveryDue = []byte("delivery_due")
	bucketGlobalMeta  = []byte("meta")
	bucketIdemExpiry  = []byte("idempotency_expiry")
)

// topBuckets are created by Open.
var topBuckets = [][]byte{bucketWorkspaces, bucketAPIKeys, bucketSpaces, bucketDeliveryDue, bucketGlobalMeta, bucketIdemExpiry}

// nested identifies a bucket nested in each workspace's bucket; a tx keeps
// the ones it has opened in an array indexed by it.
type nested int

// The buckets nested in each workspace's bucket.
const (
	bucketUsers nested = iota
	bucketUserUsername
	bucketUserEmail
	bucketUserName
	bucketUserChunks
	bucketUserRoles
	bucketUserAttrs
	bucketMappers
	bucketWebhooks
	bucketDeliveries
	bucketDeliveryEndpoint
	bucketMeta
	bucketSeq
	bucketSessions
	bucketUserSessions
	bucketTokens
	bucketIdempotency
	bucketOAuthClients
	bucketSigningKeys
	bucketAuthRequests
	bucketGrants
	bucketUserGrants
	bucketRefreshTokens
	bucketLoginAttempts
	bucketSecondFactors
	bucketUserMail
	bucketUserAuthRequests
	bucketUserTokens
	bucketGrantRefreshTokens
	bucketSweep
	bucketWebhookEvents
	bucketUserPrefixes
	bucketUserPrefixChunks
	bucketAttrValues
	bucketAttrValueCounts
	bucketRoles
	bucketRoleNames
	bucketGroups
	bucketGroupNames
	bucketGroupMembers
	bucketUserGroups
	bucketGroupRoles
	bucketRoleGroups
	bucketRoleHolders
	bucketRoleHolderCounts
	bucketGroupMemberCounts
	bucketAssets
	bucketAudit
	bucketAuditIndex
	bucketAuditFolded
	bucketPasskeys
	bucketUserPasskeys
	bucketPasskeyHandles
	bucketHandleUsers
	numNested // the number of nested buckets
)

// nestedNames are the bbolt names of the nested buckets.
var nestedNames = [numNested][]byte{
	bucketUsers:            []byte("users"),
	bucketUserUsername:     []byte("user_username"),
	bucketUserEmail:        []byte("user_email"),
	bucketUserName:         []byte("user_name"),
	bucketUserChunks:       []byte("user_chunks"),
	bucketUserRoles:        []byte("user_roles"),
	bucketUserAttrs:        []byte("user_attrs"),
	bucketMappers:          []byte("mappers"),
	bucketWebhooks:         []byte("webhooks"),
	bucketDeliveries:       []byte("deliveries"),
	bucketDeliveryEndpoint: []byte("delivery_endpoint"),
	bucketMeta:             []byte("meta"),
	bucketSeq:              []byte("seq"),
	bucketSessions:         []byte("sessions"),
	bucketUserSessions:     []byte("user_sessions"),
	bucketTokens:           []byte("verification_tokens"),
	bucketIdempotency:      []byte("idempotency"),
	bucketOAuthClients:     []byte("oauth_clients"),
	bucketSigningKeys:      []byte("signing_keys"),
	bucketAuthRequests:     []byte("auth_requests"),
	bucketGrants:           []byte("grants"),
	bucketUserGrants:       []byte("user_grants"),
	bucketRefreshTokens:    []byte("refresh_tokens"),
	bucketLoginAttempts:    []byte("login_attempts"),
	bucketSecondFactors:    []byte("second_factors"),
	// The indexes DeleteUser finds a user's records by: they came after
	// the records, so a file without them has them built (see
	// ensureLayout).
	bucketUserMail:           []byte("user_mail"),
	bucketUserAuthRequests:   []byte("user_auth_requests"),
	bucketUserTokens:         []byte("user_tokens"),
	bucketGrantRefreshTokens: []byte("grant_refresh_tokens"),
	// The index a sweep finds what it removes by (see sweep.go), built
	// likewise for a file without it.
	bucketSweep: []byte("sweep"),
	// The endpoints by event type (see fanout.go), built likewise.
	bucketWebhookEvents: []byte("webhook_events"),
	// The counts a search's total and pages are read from (see
	// prefixes.go), built likewise.
	bucketUserPrefixes:     []byte("user_prefixes"),
	bucketUserPrefixChunks: []byte("user_prefix_chunks"),
	// The users by attribute value (see attrindex.go), built likewise:
	// attr_values first, as the counts are summed from it.
	bucketAttrValues:      []byte("attr_values"),
	bucketAttrValueCounts: []byte("attr_value_counts"),
	// Roles and groups (see access.go). A file without roles gets a
	// record for every role id its users were assigned (the upgrade of
	// upgradeRoles); the indexes are built from their sources, each after
	// the buckets it is built from.
	bucketRoles:             []byte("roles"),
	bucketRoleNames:         []byte("role_names"),
	bucketGroups:            []byte("groups"),
	bucketGroupNames:        []byte("group_names"),
	bucketGroupMembers:      []byte("group_members"),
	bucketUserGroups:        []byte("user_groups"),
	bucketGroupRoles:        []byte("group_roles"),
	bucketRoleGroups:        []byte("role_groups"),
	bucketRoleHolders:       []byte("role_holders"),
	bucketRoleHolderCounts:  []byte("role_holder_counts"),
	bucketGroupMemberCounts: []byte("group_member_counts"),
	// The files a workspace serves (see assets.go). A file without the
	// bucket has no assets, so Open only creates it: there is nothing to
	// build.
	bucketAssets: []byte("assets"),
	// The audit trail and its indexes (see audit.go). A file without the
	// trail has no records, so Open only creates its buckets; a file
	// with a bucket per index has them copied into audit_index before
	// (upgradeAuditIndexes), and one with records and no index has it
	// built from them, after audit.
	bucketAudit:      []byte("audit"),
	bucketAuditIndex: []byte("audit_index"),
	// How far the records have their entries in audit_index (see
	// foldAudit). A file without it has every record indexed (releases
	// before it wrote a record's entries with the record), so Open sets
	// it to the last record.
	bucketAuditFolded: []byte("audit_folded"),
	// The passkeys of users and their user handles (see passkeys.go). A
	// file without them has none, so Open only creates the buckets.
	bucketPasskeys:       []byte("passkeys"),
	bucketUserPasskeys:   []byte("user_passkeys"),
	bucketPasskeyHandles: []byte("passkey_handles"),
	bucketHandleUsers:    []byte("handle_users"),
}

// keyUserCount is the meta key of the workspace's number of users.
var keyUserCount = []byte("user_count")

// keyRoleCount and keyGroupCount are the meta keys of the workspace's
// numbers of roles and of groups.
var (
	keyRoleCount  = []byte("role_count")
	keyGroupCount = []byte("group_count")
)

// keyPendingDeliveries is the key, in the top-level meta bucket, of the
// number of pending deliveries of every workspace.
var keyPendingDeliveries = []byte("pending_deliveries")

// legacySpaceDue is the bucket that a workspace's bucket held in files of
// the release before this one: the workspace's own due index, which every
// change of a job kept in step, with the number of its entries under
// keyPendingDeliveries in the workspace's meta bucket. WorkspaceQueue
// reads delivery_due instead, so Open deletes both (dropLegacySpaceDue).
var legacySpaceDue = []byte("due")

// emptyStringKey stands for the empty string in the unique indexes: bbolt
// rejects empty keys, and 0xFF never occurs in the valid UTF-8 that
// store.Fold returns, so it cannot clash with a real value.
var emptyStringKey = []byte{0xff}

// ensureLayout creates the top-level buckets and, for every workspace, any
// nested bucket it lacks, so a file written by an older version that had
// fewer buckets opens cleanly. A bucket created for an existing workspace
// is built from the records it derives from (buildIndexes); its existence
// marks that done, so a file is upgraded once. It deletes what a workspace
// holds that this version no longer keeps (dropLegacySpaceDue). now dates
// the role records that the upgrade to roles creates (see upgradeRoles).
func ensureLayout(btx *bbolt.Tx, now time.Time) error {
	for _, name := range topBuckets {
		if _, err := btx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	spaces := btx.Bucket(bucketSpaces)
	// Collected first: bbolt forbids changes during ForEachBucket.
	var slugs [][]byte
	err := spaces.ForEachBucket(func(slug []byte) error {
		slugs = append(slugs, bytes.Clone(slug))
		return nil
	})
	if err != nil {
		return err
	}
	for _, slug := range slugs {
		b := spaces.Bucket(slug)
		var missing []nested
		for n := range numNested {
			if b.Bucket(nestedNames[n]) == nil {
				missing = append(missing, n)
			}
		}
		if err := createSpaceBuckets(b); err != nil {
			return err
		}
		if err := buildIndexes(&space{b: b}, missing, now); err != nil {
			return fmt.Errorf("workspace %q: %w", slug, err)
		}
		if err := dropLegacySpaceDue(b); err != nil {
			return fmt.Errorf("workspace %q: %w", slug, err)
		}
	}
	return nil
}

// dropLegacySpaceDue deletes, from the workspace's bucket b, the due index
// and pending count of its own that a file of the release before this one
// holds (see legacySpaceDue); a file without them is left as it is.
func dropLegacySpaceDue(b *bbolt.Bucket) error {
	if b.Bucket(legacySpaceDue) != nil {
		if err := b.DeleteBucket(legacySpaceDue); err != nil {
			return err
		}
	}
	meta := b.Bucket(nestedNames[bucketMeta])
	if meta.Get(keyPendingDeliveries) == nil {
		return nil
	}
	return meta.Delete(keyPendingDeliveries)
}

// createSpaceBuckets creates the nested buckets of a workspace's bucket.
func createSpaceBuckets(b *bbolt.Bucket) error {
	for _, name := range nestedNames {
		if _, err := b.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// idKeyLen is the length of an encoded id.
const idKeyLen = 8

// signBit is flipped so that the unsigned byte order of a key equals the
// signed order of the id.
const signBit = 1 << 63

// idKey returns the key of an id.
func idKey(id int64) []byte { return appendID(make([]byte, 0, idKeyLen), id) }

// pairKey returns the key of a pair of ids, ordered by a then b.
func pairKey(a, b int64) []byte {
	return appendID(appendID(make([]byte, 0, 2*idKeyLen), a), b)
}

// appendID appends the key of id to dst.
func appendID(dst []byte, id int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(id)^signBit)
}

// decodeID returns the id whose key k starts with.
func decodeID(k []byte) int64 { return int64(binary.BigEndian.Uint64(k) ^ signBit) }

// appendTime appends the key of t, its unix microseconds encoded like an
// id, so that byte order is time order (before 1970 too).
func appendTime(dst []byte, t time.Time) []byte { return appendID(dst, toMicros(t)) }

// decodeTime returns the time whose key k starts with.
func decodeTime(k []byte) time.Time { return fromMicros(decodeID(k)) }

// dueKeyLen is the length of a delivery_due key without its slug.
const dueKeyLen = 2 * idKeyLen

// dueKey returns the delivery_due key of a pending delivery: when it is
// due (unix microseconds, encoded like an id), then its id, then its
// workspace's slug. The fixed-size fields come first, so any slug parses
// back.
func dueKey(dueMicros, id int64, slug string) []byte {
	k := make([]byte, 0, dueKeyLen+len(slug))
	return append(appendID(appendID(k, dueMicros), id), slug...)
}

// userSessionKey returns the user_sessions key of a session: the user id,
// the creation time, then the session id, so that a user's sessions are
// one prefix in creation order, ties by id.
func userSessionKey(userID int64, created time.Time, sessionID string) []byte {
	return userIndexKey(userID, created, sessionID)
}

// userGrantKey returns the user_grants key of a grant, laid out like a
// user_sessions key: the user id, the creation time, then the grant id.
func userGrantKey(userID int64, created time.Time, grantID string) []byte {
	return userIndexKey(userID, created, grantID)
}

// userIndexKey returns the key of a record in a per-user index: the user
// id, the record's creation time, then its id, so that a user's records
// are one prefix in creation order, ties by id. The id starts at
// 2*idKeyLen.
func userIndexKey(userID int64, created time.Time, id string) []byte {
	k := make([]byte, 0, 2*idKeyLen+len(id))
	return append(appendTime(appendID(k, userID), created), id...)
}

// uniqueKey returns the key of a folded value in a unique index.
func uniqueKey(folded string) []byte {
	if folded == "" {
		return emptyStringKey
	}
	return []byte(folded)
}

// nameKey returns the key of a user in the full name index: the folded name
// followed by the id, so that namesakes get distinct keys.
func nameKey(folded string, id int64) []byte {
	return appendID(append(make([]byte, 0, len(folded)+idKeyLen), folded...), id)
}

// The users are counted per chunk of 1<<chunkBits consecutive id keys.
const chunkBits = 10

// chunkKey returns the user_chunks key of the chunk holding the user key k.
func chunkKey(k []byte) []byte {
	return binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(k)>>chunkBits)
}

// chunkStart returns the first user key of the chunk with the key ck.
func chunkStart(ck []byte) []byte {
	return binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(ck)<<chunkBits)
}

// hasKey reports whether b holds k. It does not use Get, which cannot tell
// an empty value from a missing key.
func hasKey(b *bbolt.Bucket, k []byte) bool {
	found, _ := b.Cursor().Seek(k)
	return found != nil && bytes.Equal(found, k)
}

// prefixKeys returns copies of the keys in b that start with prefix.
func prefixKeys(b *bbolt.Bucket, prefix []byte) [][]byte {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	return keys
}

// deleteKeys deletes keys from b. Deleting while a cursor walks the bucket
// can skip keys in bbolt, hence the separate pass.
func deleteKeys(b *bbolt.Bucket, keys [][]byte) error {
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
