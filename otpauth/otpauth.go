// Package otpauth draws the otpauth:// URI of a TOTP enrolment
// (identity.TOTPEnrollment.URI) as a QR code image for authenticator apps
// to scan, with github.com/pquerna/otp (and its boombuler/barcode): the
// identity package computes and checks the codes itself and imports
// neither.
package otpauth

import (
	"bytes"
	"fmt"
	"image/png"

	"github.com/pquerna/otp"
)

// QRSize is the width and height of the QR code images, in pixels.
const QRSize = 256

// QRCode returns a PNG image, QRSize pixels square, of the QR code of an
// otpauth:// URI. A URI that is not one is an error.
func QRCode(uri string) ([]byte, error) {
	key, err := otp.NewKeyFromURL(uri)
	if err != nil || key.Type() != "totp" {
		return nil, fmt.Errorf("otpauth: not an otpauth://totp URI: %q", uri)
	}
	img, err := key.Image(QRSize, QRSize)
	if err != nil {
		return nil, fmt.Errorf("otpauth: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("otpauth: %w", err)
	}
	return buf.Bytes(), nil
}
