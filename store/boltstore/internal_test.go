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

// recordCodec is the encode and decode functions of one kind of JSON
// record, on values of any type, so that one table can hold every kind.
type recordCodec struct {
	encode func(r any) ([]byte, error)
	decode func(k, v []byte) (any, error)
}

// codecOf returns the recordCodec of encode and decode.
func codecOf[T any](encode func(T) ([]byte, error), decode func(k, v []byte) (T, error)) recordCodec {
	return recordCodec{
		encode: func(r any) ([]byte, error) { return encode(r.(T)) },
		decode: func(k, v []byte) (any, error) { return decode(k, v) },
	}
}

// TestRecordsGainedFields checks the fields that sessions, authorization
// requests, grants and refresh tokens gained: a record with all of them
// set round-trips exactly (bytes that are not UTF-8 included, where the
// client or the relying party chooses them), a record without them is
// stored without their keys, and a record as the release before them
// wrote it reads back with them empty.
func TestRecordsGainedFields(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC)
	amr := []string{"pwd", "otp"}
	session := store.Session{
		ID: "s1", UserID: 7, SecretHash: []byte("hash"), CreatedAt: at, ExpiresAt: at.Add(time.Hour), LastSeenAt: at,
	}
	request := store.AuthRequest{
		ID: "ar1", ClientID: "app", RedirectURI: "https://app.example/cb", Scopes: []string{"openid"},
		State: "st", Nonce: "n", Prompt: "login", CreatedAt: at, ExpiresAt: at.Add(time.Hour),
		UserID: 7, SessionID: "s1", AuthTime: at,
	}
	grant := store.Grant{
		ID: "gr1", ClientID: "app", UserID: 7, SessionID: "s1", Scopes: []string{"openid"},
		AuthTime: at, CreatedAt: at, ExpiresAt: at.Add(time.Hour),
	}
	refresh := store.RefreshToken{
		ID: "rt1", GrantID: "gr1", SecretHash: []byte("hash"), CreatedAt: at, ExpiresAt: at.Add(time.Hour), UsedAt: at,
	}
	tests := []struct {
		name  string
		codec recordCodec
		// id is the records' id, their key.
		id string
		// before has none of the fields; full has them all set.
		before, full any
		// keys are the JSON keys of the fields.
		keys []string
		// old is before as the release before the fields wrote it.
		old string
	}{{
		name:   "session",
		id:     "s1",
		codec:  codecOf(encodeSession, decodeSession),
		before: session,
		full: func() store.Session {
			s := session
			s.UserAgent, s.Address, s.AMR = "Mozilla/5.0 (X11) \xff\xfe cut\xc3", "203.0.113.7", amr
			return s
		}(),
		keys: []string{"user_agent", "address", "amr"},
		old: `{"user_id":7,"secret_hash":"aGFzaA==","created_us":1709251199999999,"expires_us":1709254799999999,` +
			`"last_seen_us":1709251199999999}`,
	}, {
		name:   "authorization request",
		id:     "ar1",
		codec:  codecOf(encodeAuthRequest, decodeAuthRequest),
		before: request,
		full: func() store.AuthRequest {
			r := request
			r.UILocales, r.AMR = "de-CH fr\xff en", amr
			return r
		}(),
		keys: []string{"ui_locales", "amr"},
		old: `{"client_id":"app","redirect_uri":"https://app.example/cb","scopes":["openid"],"state":"c3Q=",` +
			`"nonce":"bg==","prompt":"login","created_us":1709251199999999,"expires_us":1709254799999999,` +
			`"user_id":7,"session_id":"czE=","auth_time_us":1709251199999999}`,
	}, {
		name:   "grant",
		id:     "gr1",
		codec:  codecOf(encodeGrant, decodeGrant),
		before: grant,
		full: func() store.Grant {
			g := grant
			g.AMR = amr
			return g
		}(),
		keys: []string{"amr"},
		old: `{"client_id":"app","user_id":7,"session_id":"czE=","scopes":["openid"],"auth_time_us":1709251199999999,` +
			`"created_us":1709251199999999,"expires_us":1709254799999999}`,
	}, {
		name:   "refresh token",
		id:     "rt1",
		codec:  codecOf(encodeRefreshToken, decodeRefreshToken),
		before: refresh,
		full: func() store.RefreshToken {
			r := refresh
			r.SuccessorID = "rt2"
			return r
		}(),
		keys: []string{"successor_id"},
		old: `{"grant_id":"gr1","secret_hash":"aGFzaA==","created_us":1709251199999999,"expires_us":1709254799999999,` +
			`"used_us":1709251199999999}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := []byte(tt.id)
			for _, c := range []struct {
				what     string
				r        any
				withKeys bool
			}{{"with the fields", tt.full, true}, {"without the fields", tt.before, false}} {
				v, err := tt.codec.encode(c.r)
				if err != nil {
					t.Fatalf("encode %s: %v", c.what, err)
				}
				got, err := tt.codec.decode(id, v)
				if err != nil {
					t.Fatalf("decode %s: %v", c.what, err)
				}
				if diff := cmp.Diff(c.r, got); diff != "" {
					t.Errorf("record %s mismatch (-want +got):\n%s", c.what, diff)
				}
				for _, k := range tt.keys {
					if has := bytes.Contains(v, []byte(`"`+k+`":`)); has != c.withKeys {
						t.Errorf("record %s stored as %s: has key %q = %t, want %t", c.what, v, k, has, c.withKeys)
					}
				}
			}
			got, err := tt.codec.decode(id, []byte(tt.old))
			if err != nil {
				t.Fatalf("decode the old record: %v", err)
			}
			if diff := cmp.Diff(tt.before, got); diff != "" {
				t.Errorf("old record mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAssetRecordFormat checks that asset records round-trip whatever
// their bytes, that they cost their data and a few bytes more, that
// bytes appended after the known fields are ignored (the way the format
// grows), and that an unknown version byte and a truncated record are
// refused.
func TestAssetRecordFormat(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC)
	every := make([]byte, 0, 64<<10)
	for i := range cap(every) {
		every = append(every, byte(i*7))
	}
	tests := []struct {
		name  string
		asset store.Asset
	}{
		{"zero", store.Asset{Name: "logo"}},
		{"every byte", store.Asset{Name: "logo", ContentType: "image/png", Data: every, UpdatedAt: at}},
		{"client logo", store.Asset{Name: "client/app-1/logo", ContentType: "image/svg+xml", Data: []byte("<svg/>"), UpdatedAt: at}},
		{"not UTF-8", store.Asset{Name: "\xff\x00", ContentType: "\xc3", Data: []byte{0}, UpdatedAt: time.Unix(0, 0).UTC()}},
		{"before 1970", store.Asset{Name: "old", Data: []byte("x"), UpdatedAt: time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := encodeAsset(tt.asset)
			if err != nil {
				t.Fatalf("encodeAsset: %v", err)
			}
			// Version, two lengths and the time: at most 1+3+3+10 bytes
			// for 64 KiB.
			if overhead := len(v) - len(tt.asset.Data) - len(tt.asset.ContentType); overhead > 17 {
				t.Errorf("record of %d bytes of data takes %d bytes more", len(tt.asset.Data), overhead)
			}
			got, err := decodeAsset([]byte(tt.asset.Name), v)
			if err != nil {
				t.Fatalf("decodeAsset: %v", err)
			}
			if diff := cmp.Diff(tt.asset, got); diff != "" {
				t.Errorf("asset mismatch (-want +got):\n%s", diff)
			}
			got, err = decodeAsset([]byte(tt.asset.Name), append(slices.Clone(v), 0x01, 0x02, 0x03))
			if err != nil {
				t.Errorf("decodeAsset with a field appended: %v", err)
			} else if diff := cmp.Diff(tt.asset, got); diff != "" {
				t.Errorf("asset with a field appended mismatch (-want +got):\n%s", diff)
			}
		})
	}

	a := store.Asset{Name: "logo", ContentType: "image/png", Data: []byte("png bytes"), UpdatedAt: at}
	v, err := encodeAsset(a)
	if err != nil {
		t.Fatalf("encodeAsset: %v", err)
	}
	newer := slices.Clone(v)
	newer[0] = assetFormatV1 + 1
	if _, err := decodeAsset([]byte(a.Name), newer); err == nil {
		t.Error("decodeAsset accepted an unknown format version")
	}
	for n := range len(v) {
		if _, err := decodeAsset([]byte(a.Name), v[:n]); err == nil {
			t.Errorf("decodeAsset accepted the record cut to %d of %d bytes", n, len(v))
		}
	}
}
