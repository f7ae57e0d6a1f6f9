package httpapi

import (
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

// routeParam is a path parameter as httprouter spells it.
var routeParam = regexp.MustCompile(`:([A-Za-z]+)`)

// TestRouteTableDocumented: the route table is the one source of the
// scopes the handler checks, and openapi.yaml states exactly those: one
// operation per route, no other (but the document's own), with the
// route's scopes in x-required-scope, and the scopes of queryScopes in
// x-required-scope-by-parameter.
func TestRouteTableDocumented(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	join := func(s scopes) string {
		names := make([]string, len(s))
		for i, scope := range s {
			names[i] = string(scope)
		}
		return strings.Join(names, " ")
	}
	oasPath := func(path string) string {
		return routeParam.ReplaceAllString(strings.Replace(basePath+path, ":slug", "{slug}", 1), "{$1}")
	}
	want, byParam := map[string]string{}, map[string]string{}
	for _, rt := range routes {
		want[rt.method+" "+oasPath(rt.path)] = join(rt.scopes)
	}
	for _, q := range queryScopes {
		byParam[q.method+" "+oasPath(q.path)+" "+q.param] = join(q.scopes)
	}
	got, gotByParam := map[string]string{}, map[string]string{}
	for _, path := range doc.Paths.InMatchingOrder() {
		if path == oasPath(strings.TrimPrefix(openAPIPath, basePath)) {
			continue // the document needs no key
		}
		for method, op := range doc.Paths.Value(path).Operations() {
			scope, _ := op.Extensions["x-required-scope"].(string)
			got[method+" "+path] = scope
			params, _ := op.Extensions["x-required-scope-by-parameter"].(map[string]any)
			for param, s := range params {
				gotByParam[method+" "+path+" "+param], _ = s.(string)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("x-required-scope of openapi.yaml differs from the route table (-routes +document):\n%s", diff)
	}
	if diff := cmp.Diff(byParam, gotByParam); diff != "" {
		t.Errorf("x-required-scope-by-parameter of openapi.yaml differs from queryScopes (-queryScopes +document):\n%s", diff)
	}
}
