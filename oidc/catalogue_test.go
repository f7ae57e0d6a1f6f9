package oidc

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/i18n"
)

// pageKeys returns the catalogue keys this package's code and template
// name: every "page.…" literal, and for each one given to plural its
// ".one" and ".other".
func pageKeys(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "pages.html")
	literal := regexp.MustCompile(`"(page\.[a-z0-9_.]+)"`)
	plural := regexp.MustCompile(`plural\("(page\.[a-z0-9_.]+)"`)
	keys := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			keys[m[1]] = true
		}
		for _, m := range plural.FindAllStringSubmatch(string(src), -1) {
			delete(keys, m[1])
			keys[m[1]+".one"], keys[m[1]+".other"] = true, true
		}
	}
	return keys
}

// TestCatalogueKeysUsed: every page key of the catalogue is used by the
// pages, and every key the pages use is in the catalogue.
func TestCatalogueKeysUsed(t *testing.T) {
	used := pageKeys(t)
	var unused, missing []string
	for key := range i18n.Messages(i18n.Default) {
		if strings.HasPrefix(key, "page.") && !used[key] {
			unused = append(unused, key)
		}
	}
	for key := range used {
		if _, ok := i18n.Messages(i18n.Default)[key]; !ok {
			missing = append(missing, key)
		}
	}
	slices.Sort(unused)
	slices.Sort(missing)
	if len(unused) > 0 || len(missing) > 0 {
		t.Errorf("catalogue keys no page uses: %q\nkeys the pages use that the catalogue lacks: %q", unused, missing)
	}
	if len(used) < 100 {
		t.Errorf("only %d keys found in the pages' sources: the scan is broken", len(used))
	}
}

// TestGermanIsTranslated: every page text of the German catalogue differs
// from the English one: none was copied over untranslated.
func TestGermanIsTranslated(t *testing.T) {
	en, de := i18n.Messages("en"), i18n.Messages("de")
	for key, text := range en {
		if strings.HasPrefix(key, "page.") && de[key] == text {
			t.Errorf("%s is the same in German as in English: %q", key, text)
		}
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		before time.Duration
		en, de string
	}{
		{0, "just now", "gerade eben"},
		{59 * time.Second, "just now", "gerade eben"},
		{time.Minute, "1 minute ago", "vor 1 Minute"},
		{119 * time.Second, "1 minute ago", "vor 1 Minute"},
		{2 * time.Minute, "2 minutes ago", "vor 2 Minuten"},
		{59*time.Minute + 59*time.Second, "59 minutes ago", "vor 59 Minuten"},
		{time.Hour, "1 hour ago", "vor 1 Stunde"},
		{47*time.Hour + 59*time.Minute, "47 hours ago", "vor 47 Stunden"},
		{48 * time.Hour, "2 days ago", "vor 2 Tagen"},
		{30 * 24 * time.Hour, "30 days ago", "vor 30 Tagen"},
	}
	for _, tt := range tests {
		got := []string{ago(&pageRequest{tr: i18n.For("en")}, now, now.Add(-tt.before)), ago(&pageRequest{tr: i18n.For("de")}, now, now.Add(-tt.before))}
		if diff := cmp.Diff([]string{tt.en, tt.de}, got); diff != "" {
			t.Errorf("%v ago (-want +got):\n%s", tt.before, diff)
		}
	}
}

// TestRetryAfter: the header in whole seconds and the page's minutes,
// both rounded up.
func TestRetryAfter(t *testing.T) {
	tests := []struct {
		after   time.Duration
		header  string
		minutes int64
	}{
		{0, "1", 1},
		{time.Millisecond, "1", 1},
		{time.Second, "1", 1},
		{1500 * time.Millisecond, "2", 1},
		{60 * time.Second, "60", 1},
		{61 * time.Second, "61", 2},
		{15 * time.Minute, "900", 15},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		minutes := retryAfter(w, &identity.Error{Code: identity.CodeRateLimited, RetryAfter: tt.after})
		if got := w.Header().Get("Retry-After"); got != tt.header || minutes != tt.minutes {
			t.Errorf("RetryAfter %v: header %q and %d minutes, want %q and %d", tt.after, got, minutes, tt.header, tt.minutes)
		}
	}
	w := httptest.NewRecorder()
	if got := throttled(w, &pageRequest{tr: i18n.For("de")}, errors.New("no identity error")); got != "Zu viele Versuche. Versuchen Sie es in 1 Minute erneut." {
		t.Errorf("throttled without a RetryAfter: %q", got)
	}
}

func TestUILocale(t *testing.T) {
	for _, tt := range []struct{ ui, want string }{
		{"", ""},
		{"de", "de"},
		{"fr de-CH en", "de"},
		{"EN-gb", "en"},
		{"fr it", ""},
	} {
		if got := uiLocale(tt.ui); got != tt.want {
			t.Errorf("uiLocale(%q) = %q, want %q", tt.ui, got, tt.want)
		}
	}
}
