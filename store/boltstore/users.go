package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// errCountMismatch reports stored counts that disagree with what they
// count: the users' chunk counts with the user count, a count that would
// fall below zero.
var errCountMismatch = errors.New("boltstore: stored counts disagree with what they count")

// userFolds are the folded index fields of a user.
type userFolds struct {
	username, email, name string
}

// foldsOf returns the folded index fields of u.
func foldsOf(u store.User) userFolds {
	return userFolds{
		username: store.Fold(u.Username),
		email:    store.Fold(u.Email),
		name:     store.Fold(u.FullName),
	}
}

// PutUser implements store.Tx. It checks both unique indexes before it
// writes anything, so a conflict leaves the transaction untouched.
func (t *tx) PutUser(slug string, u store.User) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	users, key := sp.bucket(bucketUsers), idKey(u.ID)
	next := foldsOf(u)
	if err := sp.checkUnique(u, next); err != nil {
		return err
	}
	prevRecord := users.Get(key)
	existed := prevRecord != nil
	var prev userFolds
	if existed {
		old, err := decodeUser(key, prevRecord)
		if err != nil {
			return err
		}
		prev = foldsOf(old)
	}
	if err := sp.moveIndexEntries(u.ID, existed, prev, next); err != nil {
		return err
	}
	if err := sp.movePrefixCounts(u.ID, existed, prev, next); err != nil {
		return err
	}
	if err := users.Put(key, encodeUser(u)); err != nil {
		return err
	}
	if !existed {
		return sp.countNewUser(key)
	}
	return nil
}

// checkUnique returns store.ErrConflict if the folded username or email of
// u belongs to another user.
func (sp *space) checkUnique(u store.User, f userFolds) error {
	for _, idx := range []struct {
		bucket       nested
		field, value string
	}{
		{bucketUserUsername, "username", f.username},
		{bucketUserEmail, "email", f.email},
	} {
		owner := sp.bucket(idx.bucket).Get(uniqueKey(idx.value))
		if owner != nil && decodeID(owner) != u.ID {
			return fmt.Errorf("boltstore: %s %q belongs to user %d: %w",
				idx.field, idx.value, decodeID(owner), store.ErrConflict)
		}
	}
	return nil
}

// moveIndexEntries points the three indexes at the user's new folded fields,
// removing the entries of the previous ones (if the user existed) that
// changed.
func (sp *space) moveIndexEntries(id int64, existed bool, prev, next userFolds) error {
	key := idKey(id)
	if err := moveUnique(sp.bucket(bucketUserUsername), key, existed, prev.username, next.username); err != nil {
		return err
	}
	if err := moveUnique(sp.bucket(bucketUserEmail), key, existed, prev.email, next.email); err != nil {
		return err
	}
	if existed && prev.name == next.name {
		return nil
	}
	names := sp.bucket(bucketUserName)
	if existed {
		if err := names.Delete(nameKey(prev.name, id)); err != nil {
			return err
		}
	}
	return names.Put(nameKey(next.name, id), nil)
}

// moveUnique makes the unique index b map next, instead of prev, to the
// user key. It deletes prev's entry only if it is still the user's.
func moveUnique(b *bbolt.Bucket, userKey []byte, existed bool, prev, next string) error {
	if existed && prev == next {
		return nil
	}
	if existed {
		prevKey := uniqueKey(prev)
		if bytes.Equal(b.Get(prevKey), userKey) {
			if err := b.Delete(prevKey); err != nil {
				return err
			}
		}
	}
	return b.Put(uniqueKey(next), userKey)
}

// countNewUser adds a user with the key userKey to the workspace's user
// count and to its chunk's count.
func (sp *space) countNewUser(userKey []byte) error {
	meta := sp.bucket(bucketMeta)
	total := readCount(meta.Get(keyUserCount)) + 1
	if err := meta.Put(keyUserCount, binary.BigEndian.AppendUint64(nil, total)); err != nil {
		return err
	}
	chunks, ck := sp.bucket(bucketUserChunks), chunkKey(userKey)
	inChunk := readCount(chunks.Get(ck)) + 1
	return chunks.Put(ck, binary.BigEndian.AppendUint32(nil, uint32(inChunk)))
}

// readCount decodes a stored count; a missing one is zero.
func readCount(v []byte) uint64 {
	switch len(v) {
	case 4:
		return uint64(binary.BigEndian.Uint32(v))
	case 8:
		return binary.BigEndian.Uint64(v)
	default:
		return 0
	}
}

// User implements store.Tx.
func (t *tx) User(slug string, id int64) (store.User, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.User{}, err
	}
	return getRecord(sp.bucket(bucketUsers), idKey(id), decodeUser, "user %d", id)
}

// UserIDByUsername implements store.Tx.
func (t *tx) UserIDByUsername(slug, username string) (int64, error) {
	return t.lookupUnique(slug, bucketUserUsername, "username", username)
}

// UserIDByEmail implements store.Tx.
func (t *tx) UserIDByEmail(slug, email string) (int64, error) {
	return t.lookupUnique(slug, bucketUserEmail, "email", email)
}

// lookupUnique returns the id that the unique index named bucket maps the
// folded value to.
func (t *tx) lookupUnique(slug string, bucket nested, field, value string) (int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	v := sp.bucket(bucket).Get(uniqueKey(store.Fold(value)))
	if v == nil {
		return 0, notFound("user with %s %q", field, value)
	}
	return decodeID(v), nil
}

// Users implements store.Tx. Without a prefix it costs one step per chunk
// before the offset plus the page; with one, see searchUsers.
func (t *tx) Users(slug string, q store.UserQuery) ([]store.User, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	offset := max(q.Offset, 0)
	if q.Prefix == "" {
		return sp.listUsers(offset, q.Limit)
	}
	return sp.searchUsers(store.Fold(q.Prefix), offset, q.Limit)
}

// listUsers returns limit users from the offset-th on, in id order, and the
// number of users.
func (sp *space) listUsers(offset, limit int) ([]store.User, int, error) {
	total := int(readCount(sp.bucket(bucketMeta).Get(keyUserCount)))
	if limit <= 0 || offset >= total {
		return nil, total, nil
	}
	start, skip, err := sp.locate(uint64(offset))
	if err != nil {
		return nil, 0, err
	}
	c := sp.bucket(bucketUsers).Cursor()
	k, v := c.Seek(start)
	for ; k != nil && skip > 0; skip-- {
		k, v = c.Next()
	}
	users := make([]store.User, 0, min(limit, total-offset))
	for ; k != nil && len(users) < limit; k, v = c.Next() {
		u, err := decodeUser(k, v)
		if err != nil {
			return nil, 0, err
		}
		users = append(users, u)
	}
	return users, total, nil
}

// locate finds the offset-th user (from 0) by the chunk counts: it returns
// the first key of the user's chunk and how many users of the chunk come
// before it.
func (sp *space) locate(offset uint64) (chunkFirst []byte, skip uint64, err error) {
	c := sp.bucket(bucketUserChunks).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n := readCount(v)
		if offset < n {
			return chunkStart(k), offset, nil
		}
		offset -= n
	}
	return nil, 0, errCountMismatch
}

// searchIndexes returns limit of the users from the offset-th on, in id
// order, whose folded username, email or full name starts with the folded
// prefix p, and the number of them, from the three indexes: it costs one
// step per match.
func (sp *space) searchIndexes(p string, offset, limit int) ([]store.User, int, error) {
	prefix := []byte(p)
	ids := uniqueMatches(sp.bucket(bucketUserUsername), prefix, nil)
	ids = uniqueMatches(sp.bucket(bucketUserEmail), prefix, ids)
	ids = nameMatches(sp.bucket(bucketUserName), prefix, ids)
	slices.Sort(ids)
	ids = slices.Compact(ids) // a user matching on several fields counts once
	total := len(ids)
	if limit <= 0 || offset >= total {
		return nil, total, nil
	}
	page := ids[offset:min(offset+limit, total)]
	users := make([]store.User, 0, len(page))
	b := sp.bucket(bucketUsers)
	for _, id := range page {
		k := idKey(id)
		v := b.Get(k)
		if v == nil {
			return nil, 0, fmt.Errorf("boltstore: index names user %d, who does not exist", id)
		}
		u, err := decodeUser(k, v)
		if err != nil {
			return nil, 0, err
		}
		users = append(users, u)
	}
	return users, total, nil
}

// uniqueMatches appends to ids the users of the unique index b whose folded
// value starts with prefix. The key of the empty string, 0xFF, never
// matches: a non-empty prefix is valid UTF-8.
func uniqueMatches(b *bbolt.Bucket, prefix []byte, ids []int64) []int64 {
	c := b.Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ids = append(ids, decodeID(v))
	}
	return ids
}

// nameMatches appends to ids the users of the full name index whose folded
// name starts with prefix. The prefix is matched against the name alone:
// the key's trailing id bytes could otherwise complete a short name into a
// match.
func nameMatches(b *bbolt.Bucket, prefix []byte, ids []int64) []int64 {
	c := b.Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		name := k[:len(k)-idKeyLen]
		if bytes.HasPrefix(name, prefix) {
			ids = append(ids, decodeID(k[len(name):]))
		}
	}
	return ids
}
