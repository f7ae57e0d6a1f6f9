// Package i18n is the one message catalogue of the hosted pages (package
// oidc) and the emails (package smtpmail): every string a person reads,
// in every language the project speaks, and the choice of language for a
// request.
//
// Messages live in messages/<locale>/<area>.json, one object of key to
// text per file, embedded in the binary. A text may hold fmt verbs with
// explicit argument indexes ("%[1]s"), so that a translation can order
// them as its language needs. Every locale has every key of the default
// locale and no other (the package's tests check it).
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Default is the locale of a request that asks for none the catalogue
// has.
const Default = "en"

//go:embed messages
var files embed.FS

// catalogue maps a locale to its messages by key.
var catalogue = mustLoad(files)

// mustLoad reads every messages/<locale>/*.json file. A malformed file is
// a programming error, found by the package's tests.
func mustLoad(fsys fs.FS) map[string]map[string]string {
	c, err := load(fsys)
	if err != nil {
		panic(err)
	}
	return c
}

func load(fsys fs.FS) (map[string]map[string]string, error) {
	c := map[string]map[string]string{}
	names, err := fs.Glob(fsys, "messages/*/*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		locale := path.Base(path.Dir(name))
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var msgs map[string]string
		if err := json.Unmarshal(data, &msgs); err != nil {
			return nil, fmt.Errorf("i18n: %s: %w", name, err)
		}
		if c[locale] == nil {
			c[locale] = map[string]string{}
		}
		for k, v := range msgs {
			if _, dup := c[locale][k]; dup {
				return nil, fmt.Errorf("i18n: %s: key %q defined twice", name, k)
			}
			c[locale][k] = v
		}
	}
	return c, nil
}

// Locales returns the locales of the catalogue, Default first, the
// others in ascending order.
func Locales() []string {
	out := []string{Default}
	for l := range catalogue {
		if l != Default {
			out = append(out, l)
		}
	}
	slices.Sort(out[1:])
	return out
}

// Has reports whether the catalogue has the locale.
func Has(locale string) bool {
	_, ok := catalogue[locale]
	return ok
}

// Messages returns a copy of the locale's messages by key, for tests.
func Messages(locale string) map[string]string {
	out := map[string]string{}
	for k, v := range catalogue[locale] {
		out[k] = v
	}
	return out
}

// Printer prints the messages of one locale.
type Printer struct{ locale string }

// For returns the Printer of the locale, or of Default when the catalogue
// lacks it.
func For(locale string) Printer {
	if !Has(locale) {
		locale = Default
	}
	return Printer{locale: locale}
}

// Locale returns the printer's locale.
func (p Printer) Locale() string {
	if p.locale == "" {
		return Default
	}
	return p.locale
}

// T returns the message with the key, its verbs filled with args. A key
// the catalogue lacks prints as "!key!", which tests look for.
func (p Printer) T(key string, args ...any) string {
	msg, ok := catalogue[p.Locale()][key]
	if !ok {
		return "!" + key + "!"
	}
	if len(args) == 0 {
		return msg
	}
	return fmt.Sprintf(msg, args...)
}

// Negotiate returns the locale for a request: the first tag of uiLocales
// (OpenID Connect's ui_locales, space-separated, the preferred first) the
// catalogue has, else the best of the Accept-Language header, else
// Default. A tag matches by its primary language ("de-CH" is "de").
func Negotiate(uiLocales, acceptLanguage string) string {
	for _, tag := range strings.Fields(uiLocales) {
		if l, ok := match(tag); ok {
			return l
		}
	}
	for _, tag := range acceptedTags(acceptLanguage) {
		if l, ok := match(tag); ok {
			return l
		}
	}
	return Default
}

// match returns the catalogue's locale for a language tag.
func match(tag string) (string, bool) {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	if primary == "" || !Has(primary) {
		return "", false
	}
	return primary, true
}

// acceptedTags returns the tags of an Accept-Language header (RFC 9110
// section 12.5.4) by descending weight, the header's order among equals;
// tags of weight 0 and "*" are left out. At most 32 are read.
func acceptedTags(header string) []string {
	type weighted struct {
		tag string
		q   float64
	}
	var tags []weighted
	for i, part := range strings.Split(header, ",") {
		if i == 32 {
			break
		}
		tag, params, _ := strings.Cut(part, ";")
		tag = strings.TrimSpace(tag)
		q := 1.0
		if name, value, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(name) == "q" {
			parsed, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				continue
			}
			q = parsed
		}
		if tag == "" || tag == "*" || q <= 0 {
			continue
		}
		tags = append(tags, weighted{tag, q})
	}
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].q > tags[j].q })
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.tag
	}
	return out
}
