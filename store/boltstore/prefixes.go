package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// Prefix counts.
//
// A search's total counts the users whose folded username, email or full
// name starts with the prefix, each user once. Walking the three indexes
// to count costs one step per match, which a one-letter prefix over
// millions of users cannot afford. So the store keeps two counts, in step
// with every PutUser and DeleteUser in their transaction:
//
//   - user_prefixes: for every prefix of one to countedRunes runes of any
//     user's folded fields, the number of users that have it (a user whose
//     username and email both start with it counts once). A search by such
//     a prefix reads its total in one Get.
//   - user_prefix_chunks: for every first rune, the number of users of each
//     chunk (the 1024-id chunks of user_chunks) with a field starting with
//     it. A page of a broad search is found by scanning, in id order, only
//     the chunks that hold the prefix's first rune; for a one-rune prefix
//     the counts are exact, so the offset is found by summing them, not by
//     scanning the users before it.
//
// A prefix of more than countedRunes runes matches few users (each rune
// divides the matches), so its total and page come from the indexes, at a
// cost in proportion to its matches.

// countedRunes is the longest prefix, in runes, whose count is kept.
const countedRunes = 3

// maxPrefixes is the most prefixes a user has: countedRunes per field.
const maxPrefixes = 3 * countedRunes

// prefixes returns the distinct prefixes of one to countedRunes runes of the
// folded fields.
func (f userFolds) prefixes() []string {
	out := make([]string, 0, maxPrefixes)
	for _, s := range [...]string{f.username, f.email, f.name} {
		end := 0
		for range countedRunes {
			if end == len(s) {
				break
			}
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
			if !slices.Contains(out, s[:end]) {
				out = append(out, s[:end])
			}
		}
	}
	return out
}

// firstRunes returns the distinct first runes (their UTF-8 bytes) of the
// folded fields.
func (f userFolds) firstRunes() []string {
	out := make([]string, 0, 3)
	for _, s := range [...]string{f.username, f.email, f.name} {
		if s == "" {
			continue
		}
		_, w := utf8.DecodeRuneInString(s)
		if !slices.Contains(out, s[:w]) {
			out = append(out, s[:w])
		}
	}
	return out
}

// prefixChunkKey returns the user_prefix_chunks key of the first rune r
// (its UTF-8 bytes) in the chunk ck. UTF-8 is prefix-free, so the keys
// starting with one rune's bytes are exactly that rune's.
func prefixChunkKey(r string, ck []byte) []byte {
	return append(append(make([]byte, 0, len(r)+len(ck)), r...), ck...)
}

// movePrefixCounts moves the user with the id from the prefixes of prev
// (when the user existed) to those of next. Removing a user passes an
// empty next.
func (sp *space) movePrefixCounts(id int64, existed bool, prev, next userFolds) error {
	var before, beforeRunes []string
	if existed {
		before, beforeRunes = prev.prefixes(), prev.firstRunes()
	}
	after, afterRunes := next.prefixes(), next.firstRunes()
	counts := sp.bucket(bucketUserPrefixes)
	if err := moveCounts(before, after, func(p string, delta int) error {
		return addCount(counts, []byte(p), delta, 8)
	}); err != nil {
		return err
	}
	chunks, ck := sp.bucket(bucketUserPrefixChunks), chunkKey(idKey(id))
	return moveCounts(beforeRunes, afterRunes, func(r string, delta int) error {
		return addCount(chunks, prefixChunkKey(r, ck), delta, 4)
	})
}

// moveCounts calls add with +1 for each name of after not in before and
// with -1 for each name of before not in after.
func moveCounts(before, after []string, add func(name string, delta int) error) error {
	for _, p := range after {
		if !slices.Contains(before, p) {
			if err := add(p, +1); err != nil {
				return err
			}
		}
	}
	for _, p := range before {
		if !slices.Contains(after, p) {
			if err := add(p, -1); err != nil {
				return err
			}
		}
	}
	return nil
}

// addCount adds delta to the count under k, stored big-endian in width
// bytes (4 or 8); a count that reaches zero is deleted.
func addCount(b *bbolt.Bucket, k []byte, delta, width int) error {
	n := int64(readCount(b.Get(k))) + int64(delta)
	switch {
	case n < 0:
		return fmt.Errorf("boltstore: prefix count %q below zero: %w", k, errCountMismatch)
	case n == 0:
		return b.Delete(k)
	case width == 4:
		return b.Put(k, binary.BigEndian.AppendUint32(nil, uint32(n)))
	default:
		return b.Put(k, binary.BigEndian.AppendUint64(nil, uint64(n)))
	}
}

// buildPrefixCounts fills the empty bucket n (user_prefixes or
// user_prefix_chunks) from the users of a file written before it existed.
// The counts are summed in memory first: there are far fewer prefixes
// than users.
func buildPrefixCounts(sp *space, n nested) error {
	counts := make(map[string]int)
	err := sp.bucket(bucketUsers).ForEach(func(k, v []byte) error {
		u, err := decodeUser(k, v)
		if err != nil {
			return err
		}
		f := foldsOf(u)
		if n == bucketUserPrefixes {
			for _, p := range f.prefixes() {
				counts[p]++
			}
			return nil
		}
		ck := chunkKey(k)
		for _, r := range f.firstRunes() {
			counts[string(prefixChunkKey(r, ck))]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	b, width := sp.bucket(n), 4
	if n == bucketUserPrefixes {
		width = 8
	}
	for k, c := range counts {
		if err := addCount(b, []byte(k), c, width); err != nil {
			return err
		}
	}
	return nil
}

// searchUsers returns limit of the users from the offset-th on, in id
// order, whose folded username, email or full name starts with the folded
// prefix p, and the number of them.
//
// A prefix of up to countedRunes runes reads its total from
// user_prefixes, then takes whichever way to its page costs less: the
// indexes (one step per match) or a scan of the users in id order
// through the chunks that hold its first rune (a scan of about
// (offset+limit) * users / total records, where a one-rune prefix skips
// the offset by the chunk counts instead).
func (sp *space) searchUsers(p string, offset, limit int) ([]store.User, int, error) {
	runes := utf8.RuneCountInString(p)
	if runes > countedRunes {
		return sp.searchIndexes(p, offset, limit)
	}
	total := int(readCount(sp.bucket(bucketUserPrefixes).Get([]byte(p))))
	if limit <= 0 || offset >= total {
		return nil, total, nil
	}
	all := int(readCount(sp.bucket(bucketMeta).Get(keyUserCount)))
	if !scanIsCheaper(all, runes, offset, limit, total) {
		users, _, err := sp.searchIndexes(p, offset, limit)
		return users, total, err
	}
	users, err := sp.scanMatches(p, runes == 1, offset, limit)
	return users, total, err
}

// scanIsCheaper estimates the two ways to a page of a search with total
// matches among users: the indexes step once per match (and sort); a scan
// decodes about users/total records per match it passes, at about twice
// the cost of an index step, after stepping over the chunk counts.
func scanIsCheaper(users, runes, offset, limit, total int) bool {
	passed := offset + limit
	if runes == 1 {
		passed = limit // the chunk counts skip the offset
	}
	scan := passed*users/total*2 + users>>chunkBits
	return scan < total
}

// scanMatches scans the users in id order for limit matches of the folded
// prefix p after skipping offset of them, visiting only the chunks whose
// count for p's first rune is not zero. When exact (p is one rune), those
// counts are p's own, so whole chunks are skipped by their count.
func (sp *space) scanMatches(p string, exact bool, offset, limit int) ([]store.User, error) {
	_, w := utf8.DecodeRuneInString(p)
	first := []byte(p[:w])
	skip := uint64(offset)
	users := make([]store.User, 0, limit)
	records := sp.bucket(bucketUsers).Cursor()
	c := sp.bucket(bucketUserPrefixChunks).Cursor()
	for k, v := c.Seek(first); bytes.HasPrefix(k, first); k, v = c.Next() {
		ck := k[len(first):]
		if exact && skip >= readCount(v) {
			skip -= readCount(v)
			continue
		}
		for uk, uv := records.Seek(chunkStart(ck)); uk != nil && bytes.Equal(chunkKey(uk), ck); uk, uv = records.Next() {
			ok, err := recordMatches(uv, p)
			if err != nil {
				return nil, fmt.Errorf("%w (id %d)", err, decodeID(uk))
			}
			if !ok {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			u, err := decodeUser(uk, uv)
			if err != nil {
				return nil, err
			}
			if users = append(users, u); len(users) == limit {
				return users, nil
			}
		}
	}
	return users, nil
}

// recordMatches reports whether the folded username, email or full name
// of the user record v starts with the folded prefix p, without decoding
// the record.
func recordMatches(v []byte, p string) (bool, error) {
	if len(v) < 2 || v[0] != userFormatV1 {
		return false, errCorruptUser
	}
	pos := 2
	for range 3 { // username, email, full name: the record's first strings
		n, w := binary.Uvarint(v[pos:])
		if w <= 0 || n > uint64(len(v)-pos-w) {
			return false, errCorruptUser
		}
		pos += w
		if hasFoldedPrefix(v[pos:pos+int(n)], p) {
			return true, nil
		}
		pos += int(n)
	}
	return false, nil
}

// hasFoldedPrefix reports whether store.Fold(string(s)) starts with the
// folded p. Fold lowers rune by rune (an invalid byte becomes U+FFFD, which
// is what DecodeRune returns for it), so comparing rune by rune agrees
// with it without building the folded string.
func hasFoldedPrefix(s []byte, p string) bool {
	for p != "" {
		if len(s) == 0 {
			return false
		}
		r, w := utf8.DecodeRune(s)
		s = s[w:]
		pr, pw := utf8.DecodeRuneInString(p)
		p = p[pw:]
		if unicode.ToLower(r) != pr {
			return false
		}
	}
	return true
}
