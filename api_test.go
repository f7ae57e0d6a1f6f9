package identity_test

import (
	"context"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// The shape of the API (doc.go, "Names"): every exported method of the
// four handles a program gets follows one verb scheme and one result
// shape, and doc.go lists it once under its capability.

// apiTypes are the handles whose methods make the API.
var apiTypes = []reflect.Type{
	reflect.TypeFor[*identity.Service](),
	reflect.TypeFor[*identity.Workspace](),
	reflect.TypeFor[*identity.Provider](),
	reflect.TypeFor[*identity.Queue](),
}

// verbs are the words a method that takes a context may start with.
var verbs = []string{
	// Records.
	"Get", "List", "Create", "Update", "Delete", "Set", "Count",
	// Actions on them.
	"Add", "Assign", "Remove", "Disable", "Enable", "Unlock", "Revoke", "Rotate", "Retry", "Import", "Export",
	"Send", "Confirm", "Begin", "Change", "Check", "Request", "Reset", "Regenerate",
	// Credentials and tokens.
	"Authenticate", "Authorize", "Login", "SignIn", "Verify", "Issue", "Exchange", "Refresh", "Introspect",
	"Complete", "Resume", "End",
	// Operations and the queue.
	"Backup", "Sweep", "Lease", "Record",
}

// contextFree are the methods without a context: accessors of what a
// handle holds, facets, and the calls that touch no store.
var contextFree = []string{
	"Service.AllowsPrivateWebhooks", "Service.Close", "Service.IssuerBase", "Service.Now", "Service.PasswordHashing",
	"Service.PasswordHashingBudget", "Service.Queue", "Service.TokensReady", "Service.TrustsProxy", "Service.WatchQueue",
	"Workspace.CreatedAt", "Workspace.Issuer", "Workspace.Provider", "Workspace.Slug",
	"Queue.Now",
}

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// methodsOf returns the exported methods of the API's handles as
// "Type.Method", with their reflect.Method.
func methodsOf() map[string]reflect.Method {
	out := map[string]reflect.Method{}
	for _, typ := range apiTypes {
		for m := range typ.Methods() {
			out[typ.Elem().Name()+"."+m.Name] = m
		}
	}
	return out
}

// TestVerbScheme: a method that takes a context starts with one of the
// verbs; the others are the context-free ones listed.
func TestVerbScheme(t *testing.T) {
	var free []string
	for name, m := range methodsOf() {
		method := strings.SplitN(name, ".", 2)[1]
		if m.Type.NumIn() < 2 || m.Type.In(1) != contextType {
			free = append(free, name)
			continue
		}
		if !slices.ContainsFunc(verbs, func(v string) bool { return startsWithWord(method, v) }) {
			t.Errorf("%s takes a context but starts with no verb of the scheme", name)
		}
	}
	slices.Sort(free)
	want := slices.Sorted(slices.Values(contextFree))
	if diff := cmp.Diff(want, free); diff != "" {
		t.Errorf("methods without a context (-want +got):\n%s", diff)
	}
}

// startsWithWord reports whether name is word, or word followed by
// another capitalised word.
func startsWithWord(name, word string) bool {
	rest, ok := strings.CutPrefix(name, word)
	return ok && (rest == "" || rest[0] >= 'A' && rest[0] <= 'Z')
}

// TestResultShape: a method returns at most a value and an error (a
// struct when it has more to say); Get returns one value, List a page, a
// slice or a map; a create whose result carries a secret returns a
// Created* struct.
func TestResultShape(t *testing.T) {
	for name, m := range methodsOf() {
		method := strings.SplitN(name, ".", 2)[1]
		ft := m.Type
		if ft.NumOut() > 2 || ft.NumOut() == 2 && ft.Out(1) != errorType {
			t.Errorf("%s returns %d values: a value and an error at most", name, ft.NumOut())
			continue
		}
		if ft.NumOut() == 0 {
			continue
		}
		result := ft.Out(0)
		switch {
		case startsWithWord(method, "Get") && ft.NumOut() != 2:
			t.Errorf("%s: a Get returns a value and an error", name)
		case startsWithWord(method, "List") && !isCollection(result):
			t.Errorf("%s returns %v: a List returns a List, a cursor's *Page, a slice or a map", name, result)
		case startsWithWord(method, "Create") && hasSecret(result) && !strings.HasPrefix(result.Name(), "Created"):
			t.Errorf("%s returns %v, which carries a secret: a create returns a Created* struct", name, result)
		}
	}
	// Every Created* struct carries its secret under one name.
	for _, typ := range []reflect.Type{
		reflect.TypeFor[identity.CreatedAPIKey](), reflect.TypeFor[identity.CreatedClient](),
		reflect.TypeFor[identity.CreatedWebhook](), reflect.TypeFor[identity.CreatedSession](),
	} {
		if !hasSecret(typ) {
			t.Errorf("%v has no Secret string field", typ)
		}
	}
}

func isCollection(t reflect.Type) bool {
	return t.Kind() == reflect.Slice || t.Kind() == reflect.Map ||
		t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "List[") ||
		t.Kind() == reflect.Struct && strings.HasSuffix(t.Name(), "Page") // a cursor's page: the audit trail
}

func hasSecret(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	f, ok := t.FieldByName("Secret")
	return ok && f.Type.Kind() == reflect.String
}

// docLink matches a doc link to a method or function in doc.go.
var docLink = regexp.MustCompile(`\[((?:Service|Workspace|Provider|Queue)\.[A-Za-z]+|New|Open)\]`)

// TestDocListsEveryMethod: doc.go lists every method of the handles once,
// under its capability, and no method that is gone.
func TestDocListsEveryMethod(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range docLink.FindAllStringSubmatch(string(doc), -1) {
		seen[m[1]]++
	}
	methods := methodsOf()
	for name := range methods {
		if seen[name] != 1 {
			t.Errorf("doc.go lists %s %d times, want once", name, seen[name])
		}
	}
	for name := range seen {
		if _, ok := methods[name]; !ok && name != "New" && name != "Open" {
			t.Errorf("doc.go lists %s, which is no method of the API", name)
		}
	}
}
