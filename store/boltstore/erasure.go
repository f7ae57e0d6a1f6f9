package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// Permanent deletion, and the indexes it finds a user's records by.
//
// Besides user_sessions and user_grants, four index buckets of a
// workspace serve DeleteUser alone, so that it costs in proportion to
// what the user has, never a scan of the workspace's records:
//
//	user_mail              user id + delivery id -> empty, for mail jobs
//	                       with a UserID
//	user_auth_requests     user id + request id -> empty, for requests
//	                       with a UserID (set once the user signs in)
//	user_tokens            user id + token id -> empty, for single-use
//	                       tokens with a UserID
//	grant_refresh_tokens   uvarint length + grant id + token id -> empty
//
// Every put of such a record moves its entry in the transaction that
// writes it. A file written before these buckets existed gets them built
// from its records when it is opened (see ensureLayout and buildIndexes).

// userRecordKey returns the key of the record id of the user in a
// per-user index, or nil for user 0, which has no entries.
func userRecordKey(userID int64, id string) []byte {
	if userID == 0 {
		return nil
	}
	return append(appendID(make([]byte, 0, idKeyLen+len(id)), userID), id...)
}

// userMailKey returns the user_mail key of a mail job, or nil when it
// names no user.
func userMailKey(userID, deliveryID int64) []byte {
	if userID == 0 {
		return nil
	}
	return pairKey(userID, deliveryID)
}

// grantTokenKey returns the grant_refresh_tokens key of a refresh token:
// its grant id, length first so that no grant's prefix is another's, then
// the token id.
func grantTokenKey(grantID, tokenID string) []byte {
	return append(appendString(make([]byte, 0, binary.MaxVarintLen64+len(grantID)+len(tokenID)), grantID), tokenID...)
}

// The entry of each record in the index that follows it, nil for none.

func sessionEntry(s store.Session) []byte { return userSessionKey(s.UserID, s.CreatedAt, s.ID) }

func tokenEntry(v store.VerificationToken) []byte { return userRecordKey(v.UserID, v.ID) }

func authRequestEntry(r store.AuthRequest) []byte { return userRecordKey(r.UserID, r.ID) }

func refreshTokenEntry(r store.RefreshToken) []byte { return grantTokenKey(r.GrantID, r.ID) }

// grantEntry is nil for a grant of user 0, which belongs to no user.
func grantEntry(g store.Grant) []byte {
	if g.UserID == 0 {
		return nil
	}
	return userGrantKey(g.UserID, g.CreatedAt, g.ID)
}

// moveEntry makes the index b hold next instead of prev; nil stands for
// no entry.
func moveEntry(b *bbolt.Bucket, prev, next []byte) error {
	if prev != nil && !bytes.Equal(prev, next) {
		if err := b.Delete(prev); err != nil {
			return err
		}
	}
	if next == nil {
		return nil
	}
	return b.Put(next, nil)
}

// buildIndexes fills the index buckets among missing, created just now in
// a workspace whose records predate them, from the records. now is the
// time of the upgrade to roles, should roles be among them.
func buildIndexes(sp *space, missing []nested, now time.Time) error {
	for _, n := range missing {
		var err error
		switch n {
		case bucketUserMail:
			err = sp.bucket(bucketDeliveries).ForEach(func(k, v []byte) error {
				if decodeID(k) != 0 {
					return nil // a webhook job
				}
				d, err := decodeDelivery(k, v)
				if err != nil {
					return err
				}
				return moveEntry(sp.bucket(bucketUserMail), nil, userMailKey(d.UserID, d.ID))
			})
		case bucketUserAuthRequests:
			err = sp.bucket(bucketAuthRequests).ForEach(func(k, v []byte) error {
				r, err := decodeAuthRequest(k, v)
				if err != nil {
					return err
				}
				return moveEntry(sp.bucket(bucketUserAuthRequests), nil, userRecordKey(r.UserID, r.ID))
			})
		case bucketUserTokens:
			err = sp.bucket(bucketTokens).ForEach(func(k, v []byte) error {
				tok, err := decodeToken(k, v)
				if err != nil {
					return err
				}
				return moveEntry(sp.bucket(bucketUserTokens), nil, userRecordKey(tok.UserID, tok.ID))
			})
		case bucketSweep:
			err = buildSweepIndex(sp)
		case bucketUserPrefixes, bucketUserPrefixChunks:
			err = buildPrefixCounts(sp, n)
		case bucketAttrValues, bucketAttrValueCounts:
			err = buildAttrIndex(sp, n)
		case bucketRoles:
			err = upgradeRoles(sp, now)
		case bucketRoleNames, bucketGroupNames, bucketUserGroups, bucketRoleGroups,
			bucketRoleHolders, bucketRoleHolderCounts, bucketGroupMemberCounts:
			err = buildAccessIndex(sp, n)
		case bucketAuditIndex:
			err = buildAuditIndex(sp)
		case bucketAuditFolded:
			err = markAuditFolded(sp)
		case bucketWebhookEvents:
			err = sp.bucket(bucketWebhooks).ForEach(func(k, v []byte) error {
				w, err := decodeWebhook(k, v)
				if err != nil {
					return err
				}
				return sp.moveWebhookEvents(k, nil, w.Events)
			})
		case bucketGrantRefreshTokens:
			err = sp.bucket(bucketRefreshTokens).ForEach(func(k, v []byte) error {
				r, err := decodeRefreshToken(k, v)
				if err != nil {
					return err
				}
				return sp.bucket(bucketGrantRefreshTokens).Put(grantTokenKey(r.GrantID, r.ID), nil)
			})
		}
		if err != nil {
			return fmt.Errorf("build index %s: %w", nestedNames[n], err)
		}
	}
	return nil
}

// DeleteUser implements store.Tx. It reads the user's records off the
// per-user indexes (and each grant's refresh tokens off
// grant_refresh_tokens), and its memberships and holdings off user_groups,
// user_roles and the groups' roles (removeAccess), so it costs in
// proportion to what the user has.
func (t *tx) DeleteUser(slug string, id int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	users, key := sp.bucket(bucketUsers), idKey(id)
	v := users.Get(key)
	if v == nil {
		return notFound("user %d", id)
	}
	u, err := decodeUser(key, v)
	if err != nil {
		return err
	}
	if err := sp.removeUser(u); err != nil {
		return err
	}
	if err := sp.unindexAttributes(id); err != nil {
		return err
	}
	// Before user_roles goes: it finds the holdings of the direct roles.
	if err := sp.removeAccess(id); err != nil {
		return err
	}
	prefix := idKey(id)
	for _, b := range []nested{bucketUserRoles, bucketUserAttrs} {
		if err := deleteKeys(sp.bucket(b), prefixKeys(sp.bucket(b), prefix)); err != nil {
			return err
		}
	}
	for _, b := range []nested{bucketLoginAttempts, bucketSecondFactors} {
		if err := sp.bucket(b).Delete(key); err != nil {
			return err
		}
	}
	if err := sp.deleteUserPasskeys(id); err != nil {
		return err
	}
	// The records of user_sessions and user_grants entries: user id +
	// created time + record id.
	grantKeys := prefixKeys(sp.bucket(bucketUserGrants), prefix)
	for _, k := range grantKeys {
		grantID := string(k[2*idKeyLen:])
		tokens := sp.bucket(bucketGrantRefreshTokens)
		tokenKeys := prefixKeys(tokens, appendString(nil, grantID))
		for _, tk := range tokenKeys {
			_, tokenID, _ := readString(tk)
			if err := sp.unsweep(bucketRefreshTokens, tokenID); err != nil {
				return err
			}
			if err := sp.bucket(bucketRefreshTokens).Delete([]byte(tokenID)); err != nil {
				return err
			}
		}
		if err := deleteKeys(tokens, tokenKeys); err != nil {
			return err
		}
	}
	for _, ix := range []struct {
		index, records nested
		idAt           int
	}{
		{bucketUserSessions, bucketSessions, 2 * idKeyLen},
		{bucketUserGrants, bucketGrants, 2 * idKeyLen},
		{bucketUserAuthRequests, bucketAuthRequests, idKeyLen},
		{bucketUserTokens, bucketTokens, idKeyLen},
	} {
		keys := prefixKeys(sp.bucket(ix.index), prefix)
		for _, k := range keys {
			if err := sp.unsweep(ix.records, k[ix.idAt:]); err != nil {
				return err
			}
			if err := sp.bucket(ix.records).Delete(k[ix.idAt:]); err != nil {
				return err
			}
		}
		if err := deleteKeys(sp.bucket(ix.index), keys); err != nil {
			return err
		}
	}
	return t.deleteMailOf(slug, sp, prefix)
}

// removeUser deletes the record of u, its entries in the username, email
// and full name indexes, and counts it out of the user count, its chunk's
// and the prefix counts.
func (sp *space) removeUser(u store.User) error {
	key, f := idKey(u.ID), foldsOf(u)
	for _, idx := range []struct {
		bucket nested
		value  string
	}{{bucketUserUsername, f.username}, {bucketUserEmail, f.email}} {
		b, k := sp.bucket(idx.bucket), uniqueKey(idx.value)
		if bytes.Equal(b.Get(k), key) {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	if err := sp.bucket(bucketUserName).Delete(nameKey(f.name, u.ID)); err != nil {
		return err
	}
	if err := sp.movePrefixCounts(u.ID, true, f, userFolds{}); err != nil {
		return err
	}
	if err := sp.bucket(bucketUsers).Delete(key); err != nil {
		return err
	}
	meta := sp.bucket(bucketMeta)
	total := readCount(meta.Get(keyUserCount))
	chunks, ck := sp.bucket(bucketUserChunks), chunkKey(key)
	inChunk := readCount(chunks.Get(ck))
	if total == 0 || inChunk == 0 {
		return errCountMismatch
	}
	if err := meta.Put(keyUserCount, binary.BigEndian.AppendUint64(nil, total-1)); err != nil {
		return err
	}
	if inChunk == 1 {
		return chunks.Delete(ck)
	}
	return chunks.Put(ck, binary.BigEndian.AppendUint32(nil, uint32(inChunk-1)))
}

// deleteMailOf deletes the mail jobs whose user_mail entries start with
// prefix, a user's id key, with their entries in delivery_endpoint and
// delivery_due, and counts the pending ones out.
func (t *tx) deleteMailOf(slug string, sp *space, prefix []byte) error {
	index := sp.bucket(bucketUserMail)
	keys := prefixKeys(index, prefix)
	byID := sp.bucket(bucketDeliveryEndpoint)
	for _, k := range keys {
		idk := k[idKeyLen:]
		link, ok, err := readLink(byID, idk)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := sp.unsweep(bucketDeliveries, pairKey(link.endpoint, decodeID(idk))); err != nil {
			return err
		}
		if err := sp.bucket(bucketDeliveries).Delete(pairKey(link.endpoint, decodeID(idk))); err != nil {
			return err
		}
		if err := byID.Delete(idk); err != nil {
			return err
		}
		if err := t.moveDue(slug, decodeID(idk), link, deliveryLink{}); err != nil {
			return err
		}
	}
	return deleteKeys(index, keys)
}

// DeleteWorkspace implements store.Tx. Deleting the workspace's bucket
// takes every nested bucket with it, its assets and its audit trail with
// the trail's indexes among them; what lies outside it (the record in
// workspaces, the API keys, the delivery_due and idempotency_expiry
// entries, the pending count) is removed one by one.
func (t *tx) DeleteWorkspace(slug string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	// Pending jobs: their due entries and their share of the count.
	due, pending := t.btx.Bucket(bucketDeliveryDue), 0
	err = sp.bucket(bucketDeliveryEndpoint).ForEach(func(idk, _ []byte) error {
		link, _, err := readLink(sp.bucket(bucketDeliveryEndpoint), idk)
		if err != nil || !link.pending {
			return err
		}
		pending++
		return due.Delete(dueKey(link.due, decodeID(idk), slug))
	})
	if err != nil {
		return err
	}
	if err := t.addPending(-pending); err != nil {
		return err
	}
	expiry := t.btx.Bucket(bucketIdemExpiry)
	err = sp.bucket(bucketIdempotency).ForEach(func(k, v []byte) error {
		r, err := decodeIdem(slug, k, v)
		if err != nil {
			return err
		}
		return expiry.Delete(idemExpiryKey(r.ExpiresAt, slug, r.Scope, r.Key))
	})
	if err != nil {
		return err
	}
	var keys [][]byte
	err = t.btx.Bucket(bucketAPIKeys).ForEach(func(k, v []byte) error {
		key, err := decodeAPIKey(k, v)
		if err == nil && key.Workspace == slug {
			keys = append(keys, slices.Clone(k))
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := deleteKeys(t.btx.Bucket(bucketAPIKeys), keys); err != nil {
		return err
	}
	if err := t.btx.Bucket(bucketWorkspaces).Delete([]byte(slug)); err != nil {
		return err
	}
	t.last, t.lastSlug = nil, ""
	return t.btx.Bucket(bucketSpaces).DeleteBucket([]byte(slug))
}
