package identity_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// Branding: the display name and accent colour in Settings, and the
// logos of workspaces and clients.

// TestBrandingValidation: the display name's length and characters, the
// accent's format and its contrast against white (#767676 is the
// lightest grey at 4.5:1, #777777 just below).
func TestBrandingValidation(t *testing.T) {
	tests := []struct {
		name     string
		branding identity.Branding
		fields   []identity.FieldError
	}{
		{"empty", identity.Branding{}, nil},
		{"name and accent", identity.Branding{DisplayName: "Acme Corp", AccentColor: "#1d5fc9"}, nil},
		{"64 characters", identity.Branding{DisplayName: strings.Repeat("é", 64)}, nil},
		{"65 characters", identity.Branding{DisplayName: strings.Repeat("é", 65)}, field("branding.displayName", identity.RuleMaxLength)},
		{"a newline", identity.Branding{DisplayName: "Acme\nCorp"}, field("branding.displayName", identity.RuleControlCharacter)},
		{"#767676, 4.54:1", identity.Branding{AccentColor: "#767676"}, nil},
		{"#777777, 4.48:1", identity.Branding{AccentColor: "#777777"}, field("branding.accentColor", identity.RuleRange)},
		{"black", identity.Branding{AccentColor: "#000000"}, nil},
		// Channels of 10 or less are on the linear part of sRGB's curve.
		{"near black", identity.Branding{AccentColor: "#0a0a0a"}, nil},
		{"dark red on the linear part", identity.Branding{AccentColor: "#ff0a0a"}, field("branding.accentColor", identity.RuleRange)},
		{"white", identity.Branding{AccentColor: "#ffffff"}, field("branding.accentColor", identity.RuleRange)},
		{"upper case", identity.Branding{AccentColor: "#1D5FC9"}, nil},
		{"no hash", identity.Branding{AccentColor: "1d5fc9"}, field("branding.accentColor", identity.RuleFormat)},
		{"short form", identity.Branding{AccentColor: "#15c"}, field("branding.accentColor", identity.RuleFormat)},
		{"not hex", identity.Branding{AccentColor: "#1d5fcg"}, field("branding.accentColor", identity.RuleFormat)},
		{"a name", identity.Branding{AccentColor: "navy"}, field("branding.accentColor", identity.RuleFormat)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			s, err := e.ws.GetSettings(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			s.Branding = tt.branding
			err = e.ws.UpdateSettings(e.ctx, s)
			wantFieldsOrNil(t, err, tt.fields)
			got, err := e.ws.GetSettings(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.branding
			if tt.fields != nil {
				want = identity.Branding{}
			}
			if diff := cmp.Diff(want, got.Branding); diff != "" {
				t.Errorf("stored branding (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBrandingDefaults: the slug and the default accent stand in.
func TestBrandingDefaults(t *testing.T) {
	if got := (identity.Branding{}).Name("acme"); got != "acme" {
		t.Errorf("Name = %q, want %q", got, "acme")
	}
	if got := (identity.Branding{DisplayName: "Acme Corp"}).Name("acme"); got != "Acme Corp" {
		t.Errorf("Name = %q, want %q", got, "Acme Corp")
	}
	if got := (identity.Branding{}).Accent(); got != "#1d5fc9" {
		t.Errorf("Accent = %q, want %q", got, "#1d5fc9")
	}
	if got := (identity.Branding{AccentColor: "#000000"}).Accent(); got != "#000000" {
		t.Errorf("Accent = %q, want %q", got, "#000000")
	}
}

// pngOf returns a PNG of w×h pixels, with a tEXt chunk of text when it
// is not empty.
func pngOf(t *testing.T, w, h int, text string) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.RGBA{R: 29, G: 95, B: 201, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if text == "" {
		return data
	}
	// A tEXt chunk after IHDR (8 bytes of signature, 25 of IHDR).
	body := append([]byte("Comment\x00"), text...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, body...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return append(append(append([]byte{}, data[:33]...), chunk...), data[33:]...)
}

// TestLogos: a workspace's and a client's logo round trip, re-encoded
// without their text; bad images are refused on "logo"; a client's goes
// with the client.
func TestLogos(t *testing.T) {
	e := newOIDCEnv(t, nil)
	_, err := e.ws.GetLogo(e.ctx)
	identitytest.WantCode(t, err, identity.CodeNotFound)

	marked := pngOf(t, 16, 8, "<script>alert(1)</script>")
	logo, err := e.ws.SetLogo(e.ctx, marked)
	if err != nil {
		t.Fatalf("SetLogo: %v", err)
	}
	if bytes.Contains(logo.Data, []byte("script")) || !bytes.HasPrefix(logo.Data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("stored logo kept its text chunk or is no PNG")
	}
	img, err := png.Decode(bytes.NewReader(logo.Data))
	if err != nil || img.Bounds() != image.Rect(0, 0, 16, 8) {
		t.Fatalf("stored logo: %v, %v", img.Bounds(), err)
	}
	if r, g, b, _ := img.At(3, 0).RGBA(); r>>8 != 29 || g>>8 != 95 || b>>8 != 201 {
		t.Errorf("pixel (3,0) = %d,%d,%d, want 29,95,201", r>>8, g>>8, b>>8)
	}
	if logo.ContentType != "image/png" || !logo.UpdatedAt.Equal(t0) || len(logo.ETag) != 34 || logo.ETag[0] != '"' {
		t.Errorf("logo = %q %v %q", logo.ContentType, logo.UpdatedAt, logo.ETag)
	}
	got, err := e.ws.GetLogo(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(logo, got); diff != "" {
		t.Errorf("GetLogo (-want +got):\n%s", diff)
	}
	e.clock.Advance(time.Minute)
	other, err := e.ws.SetLogo(e.ctx, pngOf(t, 8, 8, ""))
	if err != nil {
		t.Fatal(err)
	}
	if other.ETag == logo.ETag || !other.UpdatedAt.Equal(at(time.Minute)) {
		t.Errorf("a new logo: ETag %q (was %q), UpdatedAt %v", other.ETag, logo.ETag, other.UpdatedAt)
	}
	if err := e.ws.DeleteLogo(e.ctx); err != nil {
		t.Fatal(err)
	}
	identitytest.WantCode(t, e.ws.DeleteLogo(e.ctx), identity.CodeNotFound)

	if _, err := e.ws.SetClientLogo(e.ctx, e.web.ID, pngOf(t, 4, 4, "")); err != nil {
		t.Fatalf("SetClientLogo: %v", err)
	}
	if _, err := e.ws.GetClientLogo(e.ctx, e.web.ID); err != nil {
		t.Errorf("GetClientLogo: %v", err)
	}
	_, err = e.ws.GetClientLogo(e.ctx, e.spa.ID)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.SetClientLogo(e.ctx, "0123456789abcdef", pngOf(t, 4, 4, ""))
	identitytest.WantCode(t, err, identity.CodeNotFound)
	if err := e.ws.DeleteClient(e.ctx, e.web.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.GetClientLogo(e.ctx, e.web.ID)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	// The asset itself went with the client, not just the way to it.
	err = e.st.Store.View(e.ctx, func(tx store.Tx) error {
		_, err := tx.Asset("acme", "client/"+e.web.ID+"/logo")
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the client's asset after DeleteClient: %v, want not found", err)
	}
}

// TestLogoRefusals: only a PNG within the bounds.
func TestLogoRefusals(t *testing.T) {
	big := pngOf(t, 1024, 1024, "")
	noisy := image.NewRGBA(image.Rect(0, 0, 400, 400))
	for i := range noisy.Pix {
		noisy.Pix[i] = byte(i * 7919 >> 3)
	}
	var tooBig bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&tooBig, noisy); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		rule string
	}{
		{"1024 px", big, ""},
		{"1025 px wide", pngOf(t, 1025, 1, ""), identity.RuleRange},
		{"1025 px high", pngOf(t, 1, 1025, ""), identity.RuleRange},
		{"empty", nil, identity.RuleRequired},
		{"over 100 KiB", tooBig.Bytes(), identity.RuleMaxLength},
		{"exactly 100 KiB of noise", append(pngOf(t, 1, 1, ""), make([]byte, 100<<10-len(pngOf(t, 1, 1, "")))...), ""},
		{"100 KiB and a byte", append(pngOf(t, 1, 1, ""), make([]byte, 100<<10+1-len(pngOf(t, 1, 1, "")))...), identity.RuleMaxLength},
		{"a GIF", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), identity.RuleFormat},
		{"an SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), identity.RuleFormat},
		{"a truncated PNG", pngOf(t, 16, 16, "")[:60], identity.RuleFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			_, err := e.ws.SetLogo(e.ctx, tt.data)
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("SetLogo: %v", err)
				}
				return
			}
			identitytest.WantFields(t, err, field("logo", tt.rule))
			_, err = e.ws.GetLogo(e.ctx)
			identitytest.WantCode(t, err, identity.CodeNotFound)
		})
	}
}

// TestSetBranding: the branding alone changes; the other settings stay;
// invalid branding changes nothing.
func TestSetBranding(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Threshold: 3, Duration: time.Hour})
	want := identity.Branding{DisplayName: "Acme Corp", AccentColor: "#0b5394"}
	if err := e.ws.SetBranding(e.ctx, want); err != nil {
		t.Fatalf("SetBranding: %v", err)
	}
	err := e.ws.SetBranding(e.ctx, identity.Branding{DisplayName: "Other", AccentColor: "#ffff00"})
	identitytest.WantFields(t, err, field("branding.accentColor", identity.RuleRange))
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Branding); diff != "" {
		t.Errorf("branding (-want +got):\n%s", diff)
	}
	if s.Lockout.Threshold != 3 || !s.Throttle.Disabled {
		t.Errorf("other settings changed: lockout %+v, throttle %+v", s.Lockout, s.Throttle)
	}
}

// TestClientLogoStoreFailure: a failing read of the client is the
// store's error, not a logo set for nobody.
func TestClientLogoStoreFailure(t *testing.T) {
	e := newOIDCEnv(t, nil)
	broken := errors.New("disk on fire")
	e.st.breakMethod("OAuthClient", broken)
	_, err := e.ws.SetClientLogo(e.ctx, e.web.ID, pngOf(t, 4, 4, ""))
	if !errors.Is(err, broken) {
		t.Errorf("SetClientLogo with the client unreadable: %v, want the store's error", err)
	}
	e.st.mend()
	_, err = e.ws.GetClientLogo(e.ctx, e.web.ID)
	identitytest.WantCode(t, err, identity.CodeNotFound)
}
