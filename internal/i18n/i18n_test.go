package i18n

import (
	"regexp"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestEveryLocaleHasEveryKey: a locale lacks no key of the default and has
// none of its own, and each message uses the same verbs as the default's.
func TestEveryLocaleHasEveryKey(t *testing.T) {
	verbs := regexp.MustCompile(`%(\[\d+\])?[a-zA-Z]`)
	def := Messages(Default)
	if len(def) == 0 {
		t.Fatal("the default locale has no messages")
	}
	for _, locale := range Locales()[1:] {
		msgs := Messages(locale)
		for key, text := range def {
			got, ok := msgs[key]
			if !ok {
				t.Errorf("%s lacks %q", locale, key)
				continue
			}
			want := verbs.FindAllString(text, -1)
			have := verbs.FindAllString(got, -1)
			slices.Sort(want)
			slices.Sort(have)
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("%s %q: verbs differ from %s (-%s +%s):\n%s", locale, key, Default, Default, locale, diff)
			}
		}
		for key := range msgs {
			if _, ok := def[key]; !ok {
				t.Errorf("%s has %q, which %s lacks", locale, key, Default)
			}
		}
	}
}

func TestLocales(t *testing.T) {
	if diff := cmp.Diff([]string{"en", "de"}, Locales()); diff != "" {
		t.Errorf("Locales (-want +got):\n%s", diff)
	}
}

func TestNegotiate(t *testing.T) {
	for _, c := range []struct{ ui, accept, want string }{
		{"", "", "en"},
		{"de", "", "de"},
		{"fr de-CH", "en", "de"},
		{"fr", "en-GB,de;q=0.8", "en"},
		{"", "de-DE,de;q=0.9,en;q=0.8", "de"},
		{"", "fr-FR, en;q=0.5, de;q=0.7", "de"},
		{"", "de;q=0, en;q=0.1", "en"},
		{"", "*", "en"},
		{"", "de;q=oops, en", "en"},
		{"xx", "xx", "en"},
		{"EN", "de", "en"},
	} {
		if got := Negotiate(c.ui, c.accept); got != c.want {
			t.Errorf("Negotiate(%q, %q) = %q, want %q", c.ui, c.accept, got, c.want)
		}
	}
}

func TestPrinter(t *testing.T) {
	if got := For("de").T("language.name"); got != "Deutsch" {
		t.Errorf("de language.name = %q", got)
	}
	if got := For("xx").Locale(); got != "en" {
		t.Errorf("For(xx).Locale() = %q, want en", got)
	}
	if got := For("en").T("no.such.key"); got != "!no.such.key!" {
		t.Errorf("missing key prints %q", got)
	}
}

func TestLoadRefusesDuplicatesAndBadJSON(t *testing.T) {
	dup := fstest.MapFS{
		"messages/en/a.json": {Data: []byte(`{"k": "1"}`)},
		"messages/en/b.json": {Data: []byte(`{"k": "2"}`)},
	}
	if _, err := load(dup); err == nil {
		t.Error("a key in two files loaded")
	}
	bad := fstest.MapFS{"messages/en/a.json": {Data: []byte(`{"k": 1}`)}}
	if _, err := load(bad); err == nil {
		t.Error("a non-string message loaded")
	}
}
