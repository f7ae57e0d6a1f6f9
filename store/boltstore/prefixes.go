package boltstore

import (
	"bytes"
	"cmp"
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
//   - user_prefixes: the number of users that have a prefix (a user whose
//     username and email both start with it counts once), for every
//     prefix of one to countedRunes runes of any user's folded fields, and
//     for every longer prefix whose parent (the prefix less its last rune)
//     is expanded. A counted prefix of countedRunes runes or more that more
//     than expandAt users have is expanded: its children are counted from
//     then on. The write that takes a prefix past expandAt expands it,
//     counting its children off the indexes (a walk of about expandAt
//     users), and expands in turn any child past expandAt. So every
//     prefix is either counted, or has a counted ancestor that at most
//     expandAt users have: a search's total is one Get, or a walk of the
//     indexes bounded by expandAt matches, whatever the data (usernames
//     that all start with "emp0", say).
//   - user_prefix_chunks: for every first rune, the number of users of each
//     chunk (the 1024-id chunks of user_chunks) with a field starting with
//     it. A page of a broad search is found by scanning, in id order, only
//     the chunks that hold the prefix's first rune; for a one-rune prefix
//     the counts are exact, so the offset is found by summing them, not by
//     scanning the users before it.
//
// A user_prefixes value is the count (uint64), followed by the byte 1 when
// the prefix is expanded. A count that falls to zero is deleted with its
// mark; its children are at zero then too.

// countedRunes is the longest prefix, in runes, whose count is kept.
const countedRunes = 3

// expandAt is the most users a counted prefix of countedRunes runes or
// more may have before it is expanded.
const expandAt = 4096

// prefixEntry decodes a user_prefixes value.
func prefixEntry(v []byte) (count uint64, expanded bool) {
	if len(v) < 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(v), len(v) > 8 && v[8] == 1
}

// putPrefixEntry stores the count and mark of the prefix p; a count of
// zero deletes the entry.
func putPrefixEntry(b *bbolt.Bucket, p []byte, count uint64, expanded bool) error {
	if count == 0 {
		return b.Delete(p)
	}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 9), count)
	if expanded {
		v = append(v, 1)
	}
	return b.Put(p, v)
}

// countedPrefixes returns the distinct counted prefixes of the folded
// fields: every prefix of one to countedRunes runes, and each longer one
// whose parent counts holds as expanded.
func (f userFolds) countedPrefixes(counts *bbolt.Bucket) []string {
	out := make([]string, 0, 3*countedRunes)
	for _, s := range [...]string{f.username, f.email, f.name} {
		for end, runes := 0, 0; end < len(s); runes++ {
			if runes >= countedRunes {
				if _, expanded := prefixEntry(counts.Get([]byte(s[:end]))); !expanded {
					break
				}
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
// (when the user existed) to those of next, expanding the prefixes this
// takes past expandAt. Removing a user passes an empty next. The user's
// index entries are already those of next, which an expansion counts.
func (sp *space) movePrefixCounts(id int64, existed bool, prev, next userFolds) error {
	counts := sp.bucket(bucketUserPrefixes)
	var before, beforeRunes []string
	if existed {
		before, beforeRunes = prev.countedPrefixes(counts), prev.firstRunes()
	}
	after, afterRunes := next.countedPrefixes(counts), next.firstRunes()
	var grown []string
	err := moveCounts(before, after, func(p string, delta int) error {
		c, expanded := prefixEntry(counts.Get([]byte(p)))
		n := int64(c) + int64(delta)
		if n < 0 {
			return fmt.Errorf("boltstore: prefix count %q below zero: %w", p, errCountMismatch)
		}
		if n > expandAt && !expanded && utf8.RuneCountInString(p) >= countedRunes {
			grown = append(grown, p)
		}
		return putPrefixEntry(counts, []byte(p), uint64(n), expanded)
	})
	if err != nil {
		return err
	}
	for _, p := range grown {
		if err := sp.expandPrefix(p); err != nil {
			return err
		}
	}
	chunks, ck := sp.bucket(bucketUserPrefixChunks), chunkKey(idKey(id))
	return moveCounts(beforeRunes, afterRunes, func(r string, delta int) error {
		return addCount(chunks, prefixChunkKey(r, ck), delta, 4)
	})
}

// expandPrefix marks the counted prefix q expanded and counts its
// children off the three indexes, expanding in turn any child that more
// than expandAt users have. It walks the index entries of q's users.
func (sp *space) expandPrefix(q string) error {
	counts := sp.bucket(bucketUserPrefixes)
	c, _ := prefixEntry(counts.Get([]byte(q)))
	if err := putPrefixEntry(counts, []byte(q), c, true); err != nil {
		return err
	}
	children := sp.childCounts([]byte(q))
	for _, child := range children {
		if err := putPrefixEntry(counts, child.prefix, child.count, false); err != nil {
			return err
		}
	}
	for _, child := range children {
		if child.count > expandAt {
			if err := sp.expandPrefix(string(child.prefix)); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefixCount is a prefix and the number of users that have it.
type prefixCount struct {
	prefix []byte
	count  uint64
}

// childCounts returns the children of the prefix q (q and one rune more)
// that users have, each with the number of its users, from the index
// entries that start with q.
func (sp *space) childCounts(q []byte) []prefixCount {
	type hit struct {
		child []byte
		id    int64
	}
	var hits []hit
	add := func(value []byte, id int64) {
		if len(value) > len(q) {
			_, w := utf8.DecodeRune(value[len(q):])
			hits = append(hits, hit{value[:len(q)+w], id})
		}
	}
	for _, n := range [...]nested{bucketUserUsername, bucketUserEmail} {
		c := sp.bucket(n).Cursor()
		for k, v := c.Seek(q); bytes.HasPrefix(k, q); k, v = c.Next() {
			add(k, decodeID(v))
		}
	}
	c := sp.bucket(bucketUserName).Cursor()
	for k, _ := c.Seek(q); bytes.HasPrefix(k, q); k, _ = c.Next() {
		name := k[:len(k)-idKeyLen]
		if bytes.HasPrefix(name, q) {
			add(name, decodeID(k[len(name):]))
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := bytes.Compare(a.child, b.child); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	var out []prefixCount
	for i, h := range hits {
		if i > 0 && bytes.Equal(h.child, hits[i-1].child) && h.id == hits[i-1].id {
			continue // the same user on another field
		}
		if len(out) == 0 || !bytes.Equal(out[len(out)-1].prefix, h.child) {
			out = append(out, prefixCount{prefix: bytes.Clone(h.child)})
		}
		out[len(out)-1].count++
	}
	return out
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
		return fmt.Errorf("boltstore: count %q below zero: %w", k, errCountMismatch)
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
// The counts are summed in memory, a level at a time: the prefixes of one
// to countedRunes runes in one pass over the users, then the children of
// the prefixes of the last level past expandAt in another, and so on
// while a level has prefixes past expandAt (there are far fewer prefixes
// than users).
func buildPrefixCounts(sp *space, n nested) error {
	if n == bucketUserPrefixChunks {
		return buildPrefixChunks(sp)
	}
	counts := sp.bucket(bucketUserPrefixes)
	level := make(map[string]uint64)
	err := sp.eachUserFolds(func(f userFolds) error {
		for _, p := range f.shortPrefixes() {
			level[p]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for runes := countedRunes; len(level) > 0; runes++ {
		expand := make(map[string]bool)
		for p, c := range level {
			big := c > expandAt && utf8.RuneCountInString(p) == runes
			if big {
				expand[p] = true
			}
			if err := putPrefixEntry(counts, []byte(p), c, big); err != nil {
				return err
			}
		}
		level = make(map[string]uint64)
		if len(expand) == 0 {
			break
		}
		err := sp.eachUserFolds(func(f userFolds) error {
			var children [3]string
			n := 0
			for _, s := range [...]string{f.username, f.email, f.name} {
				p, child := runePrefix(s, runes), runePrefix(s, runes+1)
				if expand[p] && len(child) > len(p) && !slices.Contains(children[:n], child) {
					children[n] = child
					n++
				}
			}
			for _, child := range children[:n] {
				level[child]++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// buildPrefixChunks fills user_prefix_chunks from the users.
func buildPrefixChunks(sp *space) error {
	counts := make(map[string]int)
	err := sp.bucket(bucketUsers).ForEach(func(k, v []byte) error {
		u, err := decodeUser(k, v)
		if err != nil {
			return err
		}
		ck := chunkKey(k)
		for _, r := range foldsOf(u).firstRunes() {
			counts[string(prefixChunkKey(r, ck))]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	b := sp.bucket(bucketUserPrefixChunks)
	for k, c := range counts {
		if err := addCount(b, []byte(k), c, 4); err != nil {
			return err
		}
	}
	return nil
}

// eachUserFolds calls fn with the folded fields of every user.
func (sp *space) eachUserFolds(fn func(userFolds) error) error {
	return sp.bucket(bucketUsers).ForEach(func(k, v []byte) error {
		u, err := decodeUser(k, v)
		if err != nil {
			return err
		}
		return fn(foldsOf(u))
	})
}

// shortPrefixes returns the distinct prefixes of one to countedRunes runes
// of the folded fields: the prefixes counted whatever is expanded.
func (f userFolds) shortPrefixes() []string {
	out := make([]string, 0, 3*countedRunes)
	for _, s := range [...]string{f.username, f.email, f.name} {
		for runes := 1; runes <= countedRunes; runes++ {
			p := runePrefix(s, runes)
			if len(p) == 0 || (runes > 1 && len(p) == len(runePrefix(s, runes-1))) {
				break
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// runePrefix returns the first n runes of s (all of s if it is shorter).
func runePrefix(s string, n int) string {
	end := 0
	for range n {
		if end == len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[end:])
		end += w
	}
	return s[:end]
}

// searchUsers returns limit of the users from the offset-th on, in id
// order, whose folded username, email or full name starts with the folded
// prefix p, and the number of them.
//
// A counted prefix reads its total from user_prefixes, then takes
// whichever way to its page costs less: the indexes (one step per match)
// or a scan of the users in id order through the chunks that hold its
// first rune (a scan of about (offset+limit) * users / total records,
// where a one-rune prefix skips the offset by the chunk counts instead).
// A prefix that is not counted has a counted ancestor that at most
// expandAt users have, so its walk of the indexes is bounded by that.
func (sp *space) searchUsers(p string, offset, limit int) ([]store.User, int, error) {
	total, counted := sp.prefixTotal(p)
	if !counted {
		return sp.searchIndexes(p, offset, limit)
	}
	runes := utf8.RuneCountInString(p)
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

// prefixTotal returns the number of users with the prefix p when
// user_prefixes counts it: when p has at most countedRunes runes or its
// parent is expanded.
func (sp *space) prefixTotal(p string) (total int, counted bool) {
	counts := sp.bucket(bucketUserPrefixes)
	if utf8.RuneCountInString(p) > countedRunes {
		_, w := utf8.DecodeLastRuneInString(p)
		if _, expanded := prefixEntry(counts.Get([]byte(p[:len(p)-w]))); !expanded {
			return 0, false
		}
	}
	c, _ := prefixEntry(counts.Get([]byte(p)))
	return int(c), true
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
