package boltstore

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

func TestUserRecordRoundTrip(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC)
	tests := []struct {
		name string
		user store.User
	}{
		{"zero", store.User{}},
		{"full", store.User{
			ID: 42, Username: "Émile", Email: "emile@example.com", FullName: "Émile Zola",
			EmailVerified: true, Enabled: true, MFAEnabled: true,
			PasswordHash: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
			CreatedAt:    at, UpdatedAt: at.Add(time.Microsecond),
		}},
		{"one flag", store.User{ID: -7, Enabled: true, CreatedAt: time.Unix(0, 0).UTC()}},
		{"before 1970", store.User{ID: math.MaxInt64, CreatedAt: time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeUser(idKey(tt.user.ID), encodeUser(tt.user))
			if err != nil {
				t.Fatalf("decodeUser: %v", err)
			}
			if diff := cmp.Diff(tt.user, got); diff != "" {
				t.Errorf("user mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserRecordFormat checks the rules that let the format grow: bytes
// appended after the known fields are ignored, a record written before
// Version was appended reads as Version 0, and an unknown version byte and
// a truncated record are refused.
func TestUserRecordFormat(t *testing.T) {
	u := store.User{ID: 1, Username: "alice", Email: "a@example.com", Enabled: true, Version: 300}
	v := encodeUser(u)
	key := idKey(u.ID)
	// beforeVersion is the length of the record without its last field,
	// Version (300 takes two varint bytes): the record older code wrote.
	beforeVersion := len(v) - 2

	old, err := decodeUser(key, v[:beforeVersion])
	if err != nil {
		t.Errorf("decodeUser of a record without Version: %v", err)
	}
	withoutVersion := u
	withoutVersion.Version = 0
	if diff := cmp.Diff(withoutVersion, old); diff != "" {
		t.Errorf("user without Version mismatch (-want +got):\n%s", diff)
	}

	got, err := decodeUser(key, append(slices.Clone(v), 0x01, 0x02, 0x03))
	if err != nil {
		t.Errorf("decodeUser with a field appended: %v", err)
	} else if diff := cmp.Diff(u, got); diff != "" {
		t.Errorf("user with a field appended mismatch (-want +got):\n%s", diff)
	}

	newer := slices.Clone(v)
	newer[0] = userFormatV1 + 1
	if _, err := decodeUser(key, newer); err == nil {
		t.Error("decodeUser accepted an unknown format version")
	}
	for n := range len(v) {
		if n == beforeVersion {
			continue
		}
		if _, err := decodeUser(key, v[:n]); err == nil {
			t.Errorf("decodeUser accepted the record cut to %d of %d bytes", n, len(v))
		}
	}
}

// TestIDKeysSortLikeIDs checks that byte order of keys is numeric order.
func TestIDKeysSortLikeIDs(t *testing.T) {
	ids := []int64{math.MinInt64, -1 << 40, -1025, -1, 0, 1, 1023, 1024, 1 << 40, math.MaxInt64}
	for i := 1; i < len(ids); i++ {
		if bytes.Compare(idKey(ids[i-1]), idKey(ids[i])) >= 0 {
			t.Errorf("key of %d does not sort before key of %d", ids[i-1], ids[i])
		}
	}
	for _, id := range ids {
		if got := decodeID(idKey(id)); got != id {
			t.Errorf("decodeID(idKey(%d)) = %d", id, got)
		}
	}
}

// TestFoldYieldsValidUTF8 guards the choice of 0xFF as the key of the
// empty string: it is safe only while store.Fold returns valid UTF-8.
func TestFoldYieldsValidUTF8(t *testing.T) {
	for _, s := range []string{"\xff", "A\xffB", "\xc3", "É\x80", string(emptyStringKey)} {
		if f := store.Fold(s); !utf8.ValidString(f) || bytes.Contains([]byte(f), emptyStringKey) {
			t.Errorf("store.Fold(%q) = %q, which is not valid UTF-8", s, f)
		}
	}
}

// TestRunGroup drives the committer's group logic directly, so that the
// calls are certain to form one group.
func TestRunGroup(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if err := s.Update(context.Background(), func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{Slug: "ws"})
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}

	errLate, errFirst := errors.New("late failure"), errors.New("first failure")
	calls := map[string]int{}
	write := func(name string, outcome func() error) func(store.Tx) error {
		return func(tx store.Tx) error {
			calls[name]++
			if err := tx.PutUserAttribute("ws", 1, name, "written"); err != nil {
				return err
			}
			return outcome()
		}
	}
	ok := func() error { return nil }
	group := []*updateCall{
		newCall(write("first-fails", func() error { return errFirst })),
		newCall(write("a", ok)),
		newCall(write("late-fails", func() error { return errLate })),
		newCall(write("b", ok)),
		newCall(write("panics", func() error { panic("boom") })),
		newCall(write("flaky", func() error {
			if calls["flaky"] == 1 { // fails in the group, succeeds alone
				return errLate
			}
			return nil
		})),
		newCall(write("c", ok)),
	}

	c := &committer{s: s, group: group}
	c.runGroup(group)

	type outcome struct {
		Err      error
		Panicked any
	}
	var got []outcome
	for _, call := range group {
		r := <-call.result
		got = append(got, outcome{Err: r.err, Panicked: r.panicValue})
	}
	want := []outcome{
		{Err: errFirst}, {}, {Err: errLate}, {}, {Panicked: "boom"}, {}, {},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}

	var attrs map[string]string
	if err := s.View(context.Background(), func(tx store.Tx) (err error) {
		attrs, err = tx.UserAttributes("ws", 1)
		return err
	}); err != nil {
		t.Fatalf("View: %v", err)
	}
	wantAttrs := map[string]string{"a": "written", "b": "written", "c": "written", "flaky": "written"}
	if diff := cmp.Diff(wantAttrs, attrs); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
	// A call failing first in its transaction saw only committed state: its
	// result stands and it is not run again. One failing after others had
	// written is run once more, alone.
	wantCalls := map[string]int{"first-fails": 1, "late-fails": 2, "panics": 1, "flaky": 2}
	gotCalls := map[string]int{}
	for name := range wantCalls {
		gotCalls[name] = calls[name]
	}
	if diff := cmp.Diff(wantCalls, gotCalls); diff != "" {
		t.Errorf("fn call counts mismatch (-want +got):\n%s", diff)
	}
}

// newCall returns a call as Update makes it.
func newCall(fn func(store.Tx) error) *updateCall {
	return &updateCall{fn: fn, result: make(chan updateResult, 1)}
}

// benchmarkUser is a user with typical field sizes.
var benchmarkUser = store.User{
	ID: 123456, Username: "user0123456", Email: "user0123456@example.com", FullName: "Alice Number123456",
	Enabled: true, EmailVerified: true,
	PasswordHash: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo",
	CreatedAt:    time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC),
	UpdatedAt:    time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC),
}

func BenchmarkDecodeUser(b *testing.B) {
	k, v := idKey(benchmarkUser.ID), encodeUser(benchmarkUser)
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if _, err := decodeUser(k, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeUser(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		encodeUser(benchmarkUser)
	}
}

// TestMapperRecordFormat checks that version 2 records round-trip, that a
// version 1 record (written before mappers had versions) reads as Version
// 0, and that unknown or corrupt records are refused.
func TestMapperRecordFormat(t *testing.T) {
	m := store.ClaimMapper{AttributeKey: "dept", ClaimName: "department", IncludeInID: true, Version: -1 << 50}
	v, err := encodeMapper(m)
	if err != nil {
		t.Fatalf("encodeMapper: %v", err)
	}
	got, err := decodeMapper([]byte(m.AttributeKey), v)
	if err != nil {
		t.Fatalf("decodeMapper: %v", err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("mapper mismatch (-want +got):\n%s", diff)
	}

	v1 := append([]byte{mapperFormatV1, mapperInID}, "department"...)
	got, err = decodeMapper([]byte(m.AttributeKey), v1)
	if err != nil {
		t.Fatalf("decodeMapper of a version 1 record: %v", err)
	}
	m.Version = 0
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("version 1 mapper mismatch (-want +got):\n%s", diff)
	}

	for _, bad := range [][]byte{nil, {mapperFormatV2}, {mapperFormatV2, 0}, {mapperFormatV2, 0, 0x80}, {9, 0, 0}} {
		if _, err := decodeMapper([]byte("k"), bad); err == nil {
			t.Errorf("decodeMapper(%x) accepted a corrupt record", bad)
		}
	}
}

// TestTokenRecordFormat checks that a token of each purpose round-trips,
// that an email verification token is stored without a purpose, and that
// a record written before tokens had purposes reads as one.
func TestTokenRecordFormat(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC)
	for _, v := range []store.VerificationToken{
		{ID: "t1", UserID: 1, Email: "a@example.com", SecretHash: []byte("h"), CreatedAt: at, ExpiresAt: at.Add(time.Hour)},
		{ID: "t2", UserID: 2, Email: "b@example.com", CreatedAt: at, ExpiresAt: at, UsedAt: at, Purpose: store.PurposePasswordReset},
		{ID: "t3", UserID: 3, CreatedAt: at, ExpiresAt: at, Purpose: store.PurposeSecondFactor},
	} {
		rec, err := encodeToken(v)
		if err != nil {
			t.Fatalf("encodeToken(%s): %v", v.ID, err)
		}
		got, err := decodeToken([]byte(v.ID), rec)
		if err != nil {
			t.Fatalf("decodeToken(%s): %v", v.ID, err)
		}
		if diff := cmp.Diff(v, got); diff != "" {
			t.Errorf("token %s mismatch (-want +got):\n%s", v.ID, diff)
		}
		if hasPurpose := bytes.Contains(rec, []byte(`"purpose"`)); hasPurpose != (v.Purpose != store.PurposeVerifyEmail) {
			t.Errorf("token %s with purpose %q stored as %s", v.ID, v.Purpose, rec)
		}
	}

	// As the release before purposes wrote it.
	old := []byte(`{"user_id":7,"email":"old@example.com","secret_hash":"aGFzaA==","created_us":1709251199999999,` +
		`"expires_us":1709254799999999,"used_us":1709251200000000}`)
	got, err := decodeToken([]byte("old"), old)
	if err != nil {
		t.Fatalf("decodeToken of a record without a purpose: %v", err)
	}
	want := store.VerificationToken{
		ID: "old", UserID: 7, Email: "old@example.com", SecretHash: []byte("hash"),
		CreatedAt: at, ExpiresAt: at.Add(time.Hour), UsedAt: at.Add(time.Microsecond), Purpose: store.PurposeVerifyEmail,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token without a purpose mismatch (-want +got):\n%s", diff)
	}
}

// TestScanIsCheaper pins the choice between the indexes and a scan for a
// page of a search: results are the same either way, the cost is not.
func TestScanIsCheaper(t *testing.T) {
	for _, c := range []struct {
		users, runes, offset, limit, total int
		want                               bool
	}{
		// 10M users, a one-rune prefix matching a tenth: 20*10*2 + 9765
		// = 10,165 records against 1,000,000 index steps.
		{10_000_000, 1, 0, 20, 1_000_000, true},
		// The offset does not count for one rune (the chunk counts skip it).
		{10_000_000, 1, 900_000, 20, 1_000_000, true},
		// But does for two: 900,020*10*2 = 18,000,400 > 1,000,000.
		{10_000_000, 2, 900_000, 20, 1_000_000, false},
		// A rare prefix: 20*1000*2 + 9765 = 49,765 > 10,000 matches.
		{10_000_000, 3, 0, 20, 10_000, false},
		// The boundary: 5*1000/100*2 + 0 = 100, not below 100 matches;
		// 5*1000/101*2 = 98 (integer division) is below 101.
		{1000, 2, 0, 5, 100, false},
		{1000, 2, 0, 5, 101, true},
		// The offset counts for two runes: 10*1000/101*2 = 198.
		{1000, 2, 5, 5, 101, false},
		// The chunk steps count: 5*2048/144*2 + 2 = 71*2 + 2 = 144, not
		// below 144; 5*2048/145*2 + 2 = 70*2 + 2 = 142 is below 145.
		{2048, 1, 0, 5, 144, false},
		{2048, 1, 0, 5, 145, true},
	} {
		got := scanIsCheaper(c.users, c.runes, c.offset, c.limit, c.total)
		if got != c.want {
			t.Errorf("scanIsCheaper(users %d, runes %d, offset %d, limit %d, total %d) = %v, want %v",
				c.users, c.runes, c.offset, c.limit, c.total, got, c.want)
		}
	}
}
