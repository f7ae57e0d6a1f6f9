package otpauth_test

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/identitylib/identity/otpauth"
)

// TestQRCode: an otpauth://totp URI becomes a 256x256 PNG; anything else
// is an error.
func TestQRCode(t *testing.T) {
	const uri = "otpauth://totp/acme:ada?algorithm=SHA1&digits=6&issuer=acme&period=30&secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	b, err := otpauth.QRCode(uri)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != 256 || img.Bounds().Dy() != 256 {
		t.Errorf("QR code: %v, %v; want a 256x256 PNG", err, img)
	}
	for _, bad := range []string{"", "https://example.com/", "otpauth://hotp/acme:ada?secret=GEZDGNBV", "::"} {
		if _, err := otpauth.QRCode(bad); err == nil {
			t.Errorf("QRCode(%q) succeeded", bad)
		}
	}
}
