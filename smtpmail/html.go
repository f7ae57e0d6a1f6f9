package smtpmail

import (
	"bytes"
	htmltemplate "html/template"
	"math"
	"regexp"

	"github.com/identitylib/identity"
)

// htmlView is the data of the HTML part.
type htmlView struct {
	words
	// Accent colours the button, the written-out link and the rule above
	// the header.
	Accent string
	// Logo is the workspace's logo in the header, or nil: the header then
	// shows the workspace's name.
	Logo *logoView
}

// logoView is how the HTML part shows the logo: the cid: URL of the
// image part, and the size to show it at.
type logoView struct {
	Src           htmltemplate.URL
	Width, Height int
}

// htmlPart is the template of the HTML part. Email clients drop style
// sheets and scripts, so every style is inline and the layout a table;
// html/template escapes every value, so a user's or a workspace's name
// cannot inject markup, and refuses a link of any scheme but http(s) or
// mailto. The colours of the text reach at least 7:1 against their
// backgrounds; the accent was checked against white by the library.
var htmlPart = htmltemplate.Must(htmltemplate.New("mail").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:0;background-color:#f3f4f6;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f3f4f6;">
<tr><td align="center" style="padding:24px 12px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:560px;background-color:#ffffff;border:1px solid #6b7280;border-top:4px solid {{.Accent}};font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5;color:#111827;">
<tr><td style="padding:24px 32px 0 32px;">
{{- if .Logo}}
<img src="{{.Logo.Src}}" alt="{{.Workspace}}" width="{{.Logo.Width}}" height="{{.Logo.Height}}" style="display:block;border:0;">
{{- else}}
<p style="margin:0;font-size:20px;font-weight:bold;">{{.Workspace}}</p>
{{- end}}
</td></tr>
<tr><td style="padding:24px 32px;">
<p style="margin:0 0 16px 0;">{{.Greeting}}</p>
<p style="margin:0 0 24px 0;">{{.Intro}}</p>
{{- if .Link}}
<p style="margin:0 0 24px 0;"><a href="{{.Link}}" style="display:inline-block;padding:12px 24px;background-color:{{.Accent}};color:#ffffff;font-weight:bold;text-decoration:none;border-radius:4px;">{{.Button}}</a></p>
<p style="margin:0 0 8px 0;font-size:14px;color:#374151;">{{.CopyLink}}</p>
<p style="margin:0 0 24px 0;font-size:14px;word-break:break-all;"><a href="{{.Link}}" style="color:{{.Accent}};">{{.Link}}</a></p>
<p style="margin:0;">{{.Expiry}}</p>
{{- end}}
</td></tr>
<tr><td style="padding:16px 32px 24px 32px;border-top:1px solid #d1d5db;font-size:13px;color:#374151;">{{.Footer}}</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`))

// renderHTML returns the HTML part of the words.
func renderHTML(w words, accent string, logo *inlineImage) (string, error) {
	view := htmlView{words: w, Accent: accentOf(accent)}
	if logo != nil {
		width, height := logoSize(logo.width, logo.height)
		view.Logo = &logoView{Src: htmltemplate.URL(logo.cidURL()), Width: width, Height: height}
	}
	var b bytes.Buffer
	if err := htmlPart.Execute(&b, view); err != nil {
		return "", err
	}
	return b.String(), nil
}

// hexColor is the form of an accent colour.
var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// accentOf returns the accent to use: the given one when it is "#rrggbb",
// else identity.DefaultAccentColor. The library fills VerificationMail.
// Accent with a contrast-checked colour; a program that leaves it empty
// gets the library's default look, and the branding never stops an
// email.
func accentOf(accent string) string {
	if hexColor.MatchString(accent) {
		return accent
	}
	return identity.DefaultAccentColor
}

// The largest size the logo is shown at, in CSS pixels: the height of a
// line of large text, and a width that leaves the header's text room on a
// phone.
const (
	logoMaxWidth  = 240
	logoMaxHeight = 48
)

// logoSize returns the size to show an image of w×h pixels at: scaled
// down, keeping its proportions, to fit logoMaxWidth×logoMaxHeight, never
// scaled up. Clients that ignore CSS (Outlook) take the attributes, so
// both are given.
func logoSize(w, h int) (int, int) {
	scale := min(1, float64(logoMaxWidth)/float64(w), float64(logoMaxHeight)/float64(h))
	return max(1, int(math.Round(float64(w)*scale))), max(1, int(math.Round(float64(h)*scale)))
}
