package identity

import (
	"testing"
	"time"
)

// rfc6238Secret is the SHA-1 secret of RFC 6238's test vectors.
var rfc6238Secret = []byte("12345678901234567890")

// TestTOTPCodeRFC6238: the codes of RFC 6238's SHA-1 test vectors, cut to
// six digits (the last six of the eight the RFC lists).
func TestTOTPCodeRFC6238(t *testing.T) {
	tests := []struct {
		unix int64
		want string
	}{
		{59, "287082"},
		{1111111109, "081804"},
		{1111111111, "050471"},
		{1234567890, "005924"},
		{2000000000, "279037"},
		{20000000000, "353130"},
	}
	for _, tt := range tests {
		if got := totpCode(rfc6238Secret, totpStep(time.Unix(tt.unix, 0))); got != tt.want {
			t.Errorf("code at %d = %q, want %q", tt.unix, got, tt.want)
		}
	}
}

// TestMatchTOTP: the steps just before and after the current one are
// accepted and no others; a step at or before the last one accepted is
// refused (replay); malformed codes are refused.
func TestMatchTOTP(t *testing.T) {
	now := time.Unix(1111111111, 0) // step 37037037; its code is 050471
	const cur = 37037037
	code := func(step int64) string { return totpCode(rfc6238Secret, step) }
	tests := []struct {
		name      string
		code      string
		after     int64
		wantStep  int64
		wantFound bool
	}{
		{"current", "050471", 0, cur, true},
		{"one step early", code(cur - 1), 0, cur - 1, true},
		{"one step late", code(cur + 1), 0, cur + 1, true},
		{"two steps early", code(cur - 2), 0, 0, false},
		{"two steps late", code(cur + 2), 0, 0, false},
		{"replay of the current step", "050471", cur, 0, false},
		{"after an earlier step", "050471", cur - 1, cur, true},
		{"a later step accepted already", "050471", cur + 1, 0, false},
		{"five digits", "50471", 0, 0, false},
		{"seven digits", "0504710", 0, 0, false},
		{"letters", "05o471", 0, 0, false},
		{"spaces", " 050471", 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tt := range tests {
		step, found := matchTOTP(rfc6238Secret, tt.code, now, tt.after)
		if step != tt.wantStep || found != tt.wantFound {
			t.Errorf("%s: matchTOTP(%q, after %d) = %d, %v; want %d, %v", tt.name, tt.code, tt.after, step, found, tt.wantStep, tt.wantFound)
		}
	}
}

// TestRecoveryCodes: ten distinct codes of the shape xxxxx-xxxxx from the
// alphabet; a code matches its own hash however it is typed, and no
// other.
func TestRecoveryCodes(t *testing.T) {
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != 10 || len(hashes) != 10 {
		t.Fatalf("%d codes, %d hashes; want 10 and 10", len(codes), len(hashes))
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 11 || c[5] != '-' || seen[c] {
			t.Errorf("code %q: want xxxxx-xxxxx, each once", c)
		}
		seen[c] = true
		for _, r := range c[:5] + c[6:] {
			if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
				t.Errorf("code %q has %q, outside the base32 alphabet", c, r)
			}
		}
		if got := matchRecoveryCode(hashes, c); got != i {
			t.Errorf("matchRecoveryCode(%q) = %d, want %d", c, got, i)
		}
	}
	typed := []struct {
		code string
		want int
	}{
		{"abcde-fghij", 0},
		{"ABCDE-FGHIJ", 0},
		{"abcdefghij", 0},
		{" abcde fghij ", 0},
		{"abcde-fghik", -1},
		{"abcde-fghi", -1},
		{"", -1},
	}
	stored := [][]byte{hashRecoveryCode("abcde-fghij")}
	for _, tt := range typed {
		if got := matchRecoveryCode(stored, tt.code); got != tt.want {
			t.Errorf("matchRecoveryCode(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}
