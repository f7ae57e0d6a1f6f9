package identity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image/png"
	"math"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// Branding bounds.
const (
	// MaxDisplayNameLength bounds Branding.DisplayName and a client's
	// name as the pages show it, in characters.
	MaxDisplayNameLength = 64
	// MaxLogoBytes bounds a logo as uploaded.
	MaxLogoBytes = 100 << 10
	// MaxLogoSide bounds a logo's width and height, in pixels.
	MaxLogoSide = 1024
	// MinAccentContrast is the contrast an accent colour must have
	// against white (WCAG 2.2: 4.5:1 for text, which white text on an
	// accent button and accent links on the white page both are).
	MinAccentContrast = 4.5
)

// DefaultAccentColor is the accent of a workspace that sets none: a blue
// with a contrast of 5.2:1 against white.
const DefaultAccentColor = "#1d5fc9"

// Branding is how the hosted pages and the emails present a workspace.
type Branding struct {
	// DisplayName is the workspace's name for people, such as "Acme
	// Corp": 1-64 characters, no control characters; empty means the
	// slug.
	DisplayName string `json:"displayName,omitempty"`
	// AccentColor is the colour of buttons and links, "#rrggbb" with a
	// contrast of at least MinAccentContrast against white; empty means
	// DefaultAccentColor.
	AccentColor string `json:"accentColor,omitempty"`
}

// validate adds the branding's problems to pr.
func (b Branding) validate(pr *problems) {
	if b.DisplayName != "" {
		checkDisplayName(pr, "branding.displayName", b.DisplayName)
	}
	if b.AccentColor == "" {
		return
	}
	rgb, ok := parseHexColor(b.AccentColor)
	switch {
	case !ok:
		pr.add("branding.accentColor", RuleFormat, "must be a colour as #rrggbb")
	case contrastWithWhite(rgb) < MinAccentContrast:
		pr.add("branding.accentColor", RuleRange, "must have a contrast of at least %.1f:1 against white (%s has %.2f:1): choose a darker colour",
			MinAccentContrast, b.AccentColor, contrastWithWhite(rgb))
	}
}

// checkDisplayName adds a problem to pr unless name has 1 to
// MaxDisplayNameLength characters and no control characters.
func checkDisplayName(pr *problems, field, name string) {
	if !checkText(pr, field, name, 1, MaxDisplayNameLength) {
		return
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			pr.add(field, RuleControlCharacter, "must not contain control characters")
			return
		}
	}
}

// Name returns the name to show for a workspace with this branding.
func (b Branding) Name(slug string) string {
	if b.DisplayName != "" {
		return b.DisplayName
	}
	return slug
}

// Accent returns the accent colour to use: AccentColor or
// DefaultAccentColor.
func (b Branding) Accent() string {
	if b.AccentColor != "" {
		return b.AccentColor
	}
	return DefaultAccentColor
}

// parseHexColor parses "#rrggbb".
func parseHexColor(s string) ([3]uint8, bool) {
	var rgb [3]uint8
	if len(s) != 7 || s[0] != '#' {
		return rgb, false
	}
	b, err := hex.DecodeString(s[1:])
	if err != nil {
		return rgb, false
	}
	copy(rgb[:], b)
	return rgb, true
}

// contrastWithWhite is the WCAG contrast ratio of the colour against
// white: (1 + 0.05) / (L + 0.05), L the relative luminance.
func contrastWithWhite(rgb [3]uint8) float64 {
	lin := func(c uint8) float64 {
		v := float64(c) / 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	l := 0.2126*lin(rgb[0]) + 0.7152*lin(rgb[1]) + 0.0722*lin(rgb[2])
	return 1.05 / (l + 0.05)
}

// Logo is an image the hosted pages and the emails show for a workspace
// or a client: a PNG, as the library re-encoded it.
type Logo struct {
	// ContentType is "image/png".
	ContentType string    `json:"contentType"`
	Data        []byte    `json:"-"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// ETag is a strong entity tag of Data, for HTTP caches.
	ETag string `json:"etag"`
}

// Asset names of logos.
const workspaceLogo = "logo"

func clientLogo(clientID string) string { return "client/" + clientID + "/logo" }

// SetLogo sets the workspace's logo, shown on every hosted page and in
// the emails. It takes a PNG of at most MaxLogoBytes and MaxLogoSide
// pixels a side, decodes it and stores it encoded anew, so that nothing
// but its pixels is kept (no text chunks, nothing a browser could take
// for another type). Anything else is CodeInvalid on "logo".
func (w *Workspace) SetLogo(ctx context.Context, data []byte) (Logo, error) {
	return w.setLogo(ctx, workspaceLogo, "", data)
}

// GetLogo returns the workspace's logo, or CodeNotFound when it has none.
func (w *Workspace) GetLogo(ctx context.Context) (Logo, error) {
	return w.getLogo(ctx, workspaceLogo, "")
}

// DeleteLogo removes the workspace's logo; CodeNotFound when it has none.
func (w *Workspace) DeleteLogo(ctx context.Context) error {
	return w.deleteLogo(ctx, workspaceLogo, "")
}

// SetClientLogo sets the logo the sign-in page shows for the OAuth
// client, with the rules of SetLogo. An unknown client is CodeNotFound.
// DeleteClient removes it with the client.
func (w *Workspace) SetClientLogo(ctx context.Context, clientID string, data []byte) (Logo, error) {
	return w.setLogo(ctx, clientLogo(clientID), clientID, data)
}

// GetClientLogo returns the client's logo, or CodeNotFound when the
// client or its logo is unknown.
func (w *Workspace) GetClientLogo(ctx context.Context, clientID string) (Logo, error) {
	return w.getLogo(ctx, clientLogo(clientID), clientID)
}

// DeleteClientLogo removes the client's logo; CodeNotFound when the
// client or its logo is unknown.
func (w *Workspace) DeleteClientLogo(ctx context.Context, clientID string) error {
	return w.deleteLogo(ctx, clientLogo(clientID), clientID)
}

// setLogo checks, re-encodes and stores a logo under the asset name; a
// client's when clientID is set.
func (w *Workspace) setLogo(ctx context.Context, name, clientID string, data []byte) (Logo, error) {
	clean, err := cleanPNG(data)
	if err != nil {
		return Logo{}, err
	}
	a := store.Asset{Name: name, ContentType: "image/png", Data: clean, UpdatedAt: w.svc.timestamp()}
	err = w.update(ctx, func(tx store.Tx) error {
		target, err := w.logoOwner(tx, clientID)
		if err != nil {
			return err
		}
		if err := tx.PutAsset(w.slug, a); err != nil {
			return err
		}
		action := AuditBrandingLogoSet
		if clientID != "" {
			action = AuditClientLogoSet
		}
		return w.audit(ctx, tx, auditEntry{action: action, target: target})
	})
	if err != nil {
		return Logo{}, fromStore(err, "workspace")
	}
	return logoFromAsset(a), nil
}

// getLogo reads the logo under the asset name.
func (w *Workspace) getLogo(ctx context.Context, name, clientID string) (Logo, error) {
	var a store.Asset
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if _, err := w.logoOwner(tx, clientID); err != nil {
			return err
		}
		a, err = tx.Asset(w.slug, name)
		if isNotFound(err) {
			return notFound("no logo")
		}
		return err
	})
	if err != nil {
		return Logo{}, fromStore(err, "workspace")
	}
	return logoFromAsset(a), nil
}

// deleteLogo removes the logo under the asset name.
func (w *Workspace) deleteLogo(ctx context.Context, name, clientID string) error {
	err := w.update(ctx, func(tx store.Tx) error {
		target, err := w.logoOwner(tx, clientID)
		if err != nil {
			return err
		}
		err = tx.DeleteAsset(w.slug, name)
		if isNotFound(err) {
			return notFound("no logo")
		}
		if err != nil {
			return err
		}
		action := AuditBrandingLogoDelete
		if clientID != "" {
			action = AuditClientLogoDeleted
		}
		return w.audit(ctx, tx, auditEntry{action: action, target: target})
	})
	return fromStore(err, "workspace")
}

// logoOwner checks in tx that the workspace, and the client when clientID
// is set, exist, and returns the owner of the logo as the target of an
// audit record.
func (w *Workspace) logoOwner(tx store.Tx, clientID string) (AuditTarget, error) {
	if _, err := tx.Workspace(w.slug); err != nil {
		return AuditTarget{}, err
	}
	if clientID == "" {
		return w.asTarget(), nil
	}
	c, err := tx.OAuthClient(w.slug, clientID)
	if isNotFound(err) {
		return AuditTarget{}, notFound("OAuth client %q not found", clientID)
	} else if err != nil {
		return AuditTarget{}, err
	}
	return clientTarget(c.ID, c.Name), nil
}

// asTarget is the workspace as the target of an audit record.
func (w *Workspace) asTarget() AuditTarget {
	return AuditTarget{Kind: TargetWorkspace, ID: w.slug, Display: w.slug}
}

func logoFromAsset(a store.Asset) Logo {
	sum := sha256.Sum256(a.Data)
	return Logo{ContentType: a.ContentType, Data: a.Data, UpdatedAt: a.UpdatedAt,
		ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// cleanPNG checks that data is a PNG within the bounds and returns it
// decoded and encoded again.
func cleanPNG(data []byte) ([]byte, error) {
	invalid := func(format string, args ...any) error {
		var p problems
		p.add("logo", RuleFormat, format, args...)
		return p.err("invalid logo")
	}
	switch {
	case len(data) == 0:
		var p problems
		p.add("logo", RuleRequired, "is required")
		return nil, p.err("invalid logo")
	case len(data) > MaxLogoBytes:
		var p problems
		p.add("logo", RuleMaxLength, "must be at most %d bytes (it has %d)", MaxLogoBytes, len(data))
		return nil, p.err("invalid logo")
	}
	// The header first: the size is known before any pixel is decoded.
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, invalid("must be a PNG image")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide {
		var p problems
		p.add("logo", RuleRange, "must be at most %d pixels wide and high (it is %dx%d)", MaxLogoSide, cfg.Width, cfg.Height)
		return nil, p.err("invalid logo")
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, invalid("must be a PNG image (%s)", pngProblem(err))
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, img); err != nil {
		return nil, internal(err)
	}
	return out.Bytes(), nil
}

// pngProblem is what a PNG decoding error says, bounded and printable.
func pngProblem(err error) string {
	msg := err.Error()
	if utf8.RuneCountInString(msg) > 80 {
		msg = string([]rune(msg)[:80])
	}
	return strconv.Quote(msg)
}
