package oidc

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// The pages' colours other than the workspace's accent. Each pair a page
// shows together meets WCAG 2.2 AA: text 4.5:1 against its background,
// the borders of inputs, messages and separators 3:1 (the package's
// tests compute every pair; see contrastPairs).
const (
	colorText       = "#1d2330" // body text
	colorMuted      = "#4b5563" // hints, secondary text
	colorPage       = "#f3f4f6" // the page around the card, code chips
	colorCard       = "#ffffff" // the card and inputs
	colorInput      = "#6b7280" // input and checkbox borders
	colorRule       = "#858c99" // the card's border, separators, table lines
	colorErrorText  = "#8a1c1c"
	colorErrorBack  = "#fdecec"
	colorErrorLine  = "#b42318"
	colorNoticeText = "#1c5a2e"
	colorNoticeBack = "#e9f7ee"
	colorNoticeLine = "#2f7d46"
	colorDanger     = "#b42318" // the background of a button that removes something, under white text
	colorOnAccent   = "#ffffff" // text on the accent and on colorDanger
)

// contrastPair is two colours a page shows together and the contrast
// WCAG 2.2 AA asks of them.
type contrastPair struct {
	what       string
	fg, bg     string
	minimum    float64
	accentized bool // fg or bg is the accent: checked for the default accent
}

// contrastPairs are every text and border colour of the pages against
// the background it is drawn on.
var contrastPairs = []contrastPair{
	{"text on the card", colorText, colorCard, 4.5, false},
	{"text on the page", colorText, colorPage, 4.5, false},
	{"muted text on the card", colorMuted, colorCard, 4.5, false},
	{"code on its chip", colorText, colorPage, 4.5, false},
	{"input border on the card", colorInput, colorCard, 3, false},
	{"separator on the card", colorRule, colorCard, 3, false},
	{"error text", colorErrorText, colorErrorBack, 4.5, false},
	{"error border on its background", colorErrorLine, colorErrorBack, 3, false},
	{"error border on the card", colorErrorLine, colorCard, 3, false},
	{"notice text", colorNoticeText, colorNoticeBack, 4.5, false},
	{"notice border on its background", colorNoticeLine, colorNoticeBack, 3, false},
	{"notice border on the card", colorNoticeLine, colorCard, 3, false},
	{"danger button text", colorOnAccent, colorDanger, 4.5, false},
	{"field error text on the card", colorErrorLine, colorCard, 4.5, false},
	{"button text on the accent", colorOnAccent, identity.DefaultAccentColor, 4.5, true},
	{"links on the card", identity.DefaultAccentColor, colorCard, 4.5, true},
}

// hexColor is what an accent must look like to go into the style sheet.
var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// style is a page's style sheet and the CSP source that allows it.
type style struct {
	css template.CSS
	// source is "'sha256-…'" of css, for style-src: the sheet differs by
	// workspace (its accent), so a hash of each one rather than
	// 'unsafe-inline'.
	source string
}

// pageStyle returns the style sheet of a workspace whose accent is
// accent ("#rrggbb"; the default accent when it is not one).
func pageStyle(accent string) style {
	if !hexColor.MatchString(accent) {
		accent = identity.DefaultAccentColor
	}
	r := strings.NewReplacer(
		"ACCENT_DARK", darken(accent, 0.18),
		"ACCENT", strings.ToLower(accent),
		"TEXT", colorText, "MUTED", colorMuted, "PAGE", colorPage, "CARD", colorCard, "INPUT", colorInput,
		"RULE", colorRule, "ERRTEXT", colorErrorText, "ERRBACK", colorErrorBack, "ERRLINE", colorErrorLine,
		"OKTEXT", colorNoticeText, "OKBACK", colorNoticeBack, "OKLINE", colorNoticeLine, "DANGER", colorDanger,
		"ONACCENT", colorOnAccent,
	)
	css := r.Replace(styleSheet)
	sum := sha256.Sum256([]byte(css))
	return style{css: template.CSS(css), source: "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"}
}

// darken returns the colour c ("#rrggbb") mixed with black by f.
func darken(c string, f float64) string {
	var out [3]int64
	for i := range out {
		v, _ := strconv.ParseInt(c[1+2*i:3+2*i], 16, 32)
		out[i] = int64(float64(v) * (1 - f))
	}
	return fmt.Sprintf("#%02x%02x%02x", out[0], out[1], out[2])
}

// styleSheet is the pages' CSS, its colours as names that pageStyle
// replaces. It has no url() and loads nothing.
const styleSheet = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:PAGE;color:TEXT;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{width:100%;min-width:0;max-width:26rem;margin:1.5rem 1rem;padding:2rem;background:CARD;border:1px solid RULE;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
main.wide{max-width:46rem}
.brand{display:flex;align-items:center;gap:.6rem;margin:0 0 1.25rem}
.logo{display:block;height:2.5rem;width:auto;max-width:10rem}
.workspace{margin:0;font-weight:600;color:TEXT}
h1{margin:0 0 .75rem;font-size:1.45rem;line-height:1.25;font-weight:650}
h2{margin:0 0 .6rem;font-size:1.1rem;font-weight:600}
p{margin:0 0 1rem}
.client{display:flex;align-items:center;gap:.5rem;margin:-.4rem 0 1.5rem;color:MUTED}
.client .logo{height:1.75rem}
.lead{margin:-.4rem 0 1.5rem;color:MUTED}
label{display:block;margin:0 0 .3rem;font-weight:550}
input[type=text],input[type=password],input[type=email]{display:block;width:100%;margin:0 0 1rem;padding:.6rem .7rem;font:inherit;color:inherit;border:1px solid INPUT;border-radius:.375rem;background:CARD}
input[readonly]{background:PAGE}
input[aria-invalid=true]{border:2px solid ERRLINE}
input[type=checkbox]{width:1.15rem;height:1.15rem;margin:.15rem 0 0;accent-color:ACCENT;flex:none}
.check{display:flex;gap:.6rem;align-items:flex-start;margin:0 0 1rem}
.check label{margin:0;font-weight:500}
:focus-visible{outline:3px solid ACCENT;outline-offset:2px}
button{display:block;width:100%;margin:0;padding:.7rem;font:inherit;font-weight:600;color:ONACCENT;background:ACCENT;border:2px solid ACCENT;border-radius:.375rem;cursor:pointer}
button:hover{background:ACCENT_DARK;border-color:ACCENT_DARK}
button.secondary{display:inline-block;width:auto;padding:.55rem 1rem;color:ACCENT;background:CARD}
button.secondary:hover{color:ACCENT_DARK;background:CARD;text-decoration:underline}
button.danger{background:DANGER;border-color:DANGER}
button.small{padding:.3rem .7rem;font-size:.9rem;white-space:nowrap}
a{color:ACCENT;text-underline-offset:.15em}
a:hover{color:ACCENT_DARK}
.error,.warning{margin:0 0 1rem;padding:.6rem .75rem;color:ERRTEXT;background:ERRBACK;border:1px solid ERRLINE;border-radius:.375rem}
p.field-error{margin:0 0 .35rem;padding:0;color:ERRLINE;background:none;border:0;font-size:.95rem;font-weight:550}
.notice{margin:0 0 1rem;padding:.6rem .75rem;color:OKTEXT;background:OKBACK;border:1px solid OKLINE;border-radius:.375rem}
.hint{color:MUTED;font-size:.95rem}
.rules{margin:-.1rem 0 .9rem;padding:0 0 0 1.2rem;color:MUTED;font-size:.95rem}
.below{margin:1.25rem 0 0}
.way{margin:1.25rem 0 0}
section{margin:1.75rem 0 0;padding:1.5rem 0 0;border-top:1px solid RULE}
form+form{margin-top:1rem}
details{margin:0 0 1rem}
summary{cursor:pointer;color:ACCENT;margin:0 0 .6rem}
.qr{display:block;width:12rem;height:12rem;margin:0 auto 1rem;image-rendering:pixelated}
code{font:.95rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.key{padding:.1rem .35rem;background:PAGE;border-radius:.25rem;overflow-wrap:anywhere}
.codes{margin:0 0 1rem;padding:0;list-style:none;columns:2}
.codes li{padding:.15rem 0}
.table{position:relative;overflow-x:auto;margin:0 0 .5rem}
table{width:100%;min-width:36rem;border-collapse:collapse;font-size:.9rem}
th,td{padding:.45rem .4rem;text-align:left;vertical-align:top;border-bottom:1px solid RULE}
th{font-weight:600}
td small{display:block;color:MUTED;font-size:.85rem}
.current{font-weight:600}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:480px){body{align-items:flex-start}main{margin:0;padding:1.5rem 1.1rem;border:0;border-radius:0;box-shadow:none;min-height:100vh}}
`
