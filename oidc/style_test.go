package oidc

import (
	"crypto/sha256"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"testing"
)

// contrast is the WCAG 2.2 contrast ratio of two "#rrggbb" colours.
func contrast(t *testing.T, a, b string) float64 {
	t.Helper()
	lum := func(c string) float64 {
		var l [3]float64
		for i := range l {
			v, err := strconv.ParseUint(c[1+2*i:3+2*i], 16, 8)
			if err != nil || len(c) != 7 {
				t.Fatalf("colour %q", c)
			}
			s := float64(v) / 255
			if s <= 0.04045 {
				l[i] = s / 12.92
			} else {
				l[i] = math.Pow((s+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	x, y := lum(a), lum(b)
	return (max(x, y) + 0.05) / (min(x, y) + 0.05)
}

// TestContrast: every text and border colour of the pages meets WCAG 2.2
// AA against its background: 4.5:1 for text, 3:1 for the borders of
// inputs and other components.
func TestContrast(t *testing.T) {
	minimum := map[bool]float64{true: 4.5, false: 3}
	for _, p := range contrastPairs {
		text := !strings.Contains(p.what, "border") && !strings.Contains(p.what, "separator")
		if p.minimum != minimum[text] {
			t.Errorf("%s: minimum %.1f, want %.1f for a %s", p.what, p.minimum, minimum[text], map[bool]string{true: "text", false: "border"}[text])
		}
		if got := contrast(t, p.fg, p.bg); got < p.minimum {
			t.Errorf("%s: %s on %s has %.2f:1, want at least %.1f:1", p.what, p.fg, p.bg, got, p.minimum)
		}
	}
	// Every colour the style sheet names is in a pair.
	named := map[string]bool{}
	for _, p := range contrastPairs {
		named[p.fg], named[p.bg] = true, true
	}
	for _, c := range []string{colorText, colorMuted, colorPage, colorCard, colorInput, colorRule, colorErrorText,
		colorErrorBack, colorErrorLine, colorNoticeText, colorNoticeBack, colorNoticeLine, colorDanger, colorOnAccent} {
		if !named[c] {
			t.Errorf("colour %s is in no contrast pair", c)
		}
	}
}

// TestStyleAccent: the workspace's accent colours buttons, links and the
// focus ring, its hover a darker shade; anything but #rrggbb is the
// default accent; the CSP source is the hash of the sheet.
func TestStyleAccent(t *testing.T) {
	tests := []struct {
		accent, want, dark string
	}{
		{"#7b2d8b", "#7b2d8b", "#642471"},
		{"#7B2D8B", "#7b2d8b", "#642471"},
		{"", "#1d5fc9", "#174da4"},
		{"red", "#1d5fc9", "#174da4"},
		{"#7b2d8b;}body{display:none", "#1d5fc9", "#174da4"},
	}
	for _, tt := range tests {
		st := pageStyle(tt.accent)
		css := string(st.css)
		for _, want := range []string{"background:" + tt.want + ";", "a{color:" + tt.want + ";", "outline:3px solid " + tt.want + ";", "button:hover{background:" + tt.dark + ";"} {
			if !strings.Contains(css, want) {
				t.Errorf("accent %q: the sheet lacks %q", tt.accent, want)
			}
		}
		if strings.ContainsAny(css, "<>") || strings.Contains(css, "ACCENT") || strings.Contains(css, "url(") {
			t.Errorf("accent %q: the sheet has markup, a name left unreplaced, or a URL", tt.accent)
		}
		sum := sha256.Sum256([]byte(css))
		if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; st.source != want {
			t.Errorf("accent %q: source %s, want %s", tt.accent, st.source, want)
		}
	}
}

func TestDarken(t *testing.T) {
	for _, tt := range []struct {
		c    string
		f    float64
		want string
	}{
		{"#ffffff", 0.5, "#7f7f7f"},
		{"#1d5fc9", 0, "#1d5fc9"},
		{"#1d5fc9", 1, "#000000"},
		{"#102030", 0.25, "#0c1824"},
	} {
		if got := darken(tt.c, tt.f); got != tt.want {
			t.Errorf("darken(%s, %v) = %s, want %s", tt.c, tt.f, got, tt.want)
		}
	}
}
