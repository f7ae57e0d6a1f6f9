package httpapi_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// codeStatus is a problem code and the one status it comes with.
type codeStatus struct {
	code   string
	status int
}

// libraryCodes is every identity.Code with the status the adapter answers
// it with. The library has no catalogue function for its codes, so the
// list is written out here and TestOpenAPIEnums checks it against the
// constants of type Code that the identity package declares.
var libraryCodes = []codeStatus{
	{string(identity.CodeInvalid), 422},
	{string(identity.CodeNotFound), 404},
	{string(identity.CodeConflict), 409},
	{string(identity.CodeReservedClaim), 400},
	{string(identity.CodeLimitReached), 409},
	{string(identity.CodeUnauthenticated), 401},
	{string(identity.CodeForbidden), 403},
	{string(identity.CodeInternal), 500},
	{string(identity.CodeTokenInvalid), 400},
	{string(identity.CodeTokenExpired), 410},
	{string(identity.CodeTokenUsed), 409},
	{string(identity.CodePreconditionFailed), 412},
	{string(identity.CodeIdempotencyKeyReused), 422},
	{string(identity.CodeIdempotencyKeyInUse), 409},
	{string(identity.CodeInvalidGrant), 400},
	{string(identity.CodeLoginRequired), 401},
	{string(identity.CodeLocked), 423},
	{string(identity.CodeMFARequired), 401},
	{string(identity.CodeMFAEnrollmentRequired), 401},
	{string(identity.CodePasskeyEnrollmentRequired), 401},
	{string(identity.CodeRateLimited), 429},
	{string(identity.CodeEmailUnverified), 403},
	{string(identity.CodeConfirmationRequired), 409},
}

// adapterCodes are the codes of the problems the adapter detects itself,
// with their statuses; TestOpenAPIEnums checks them against the code
// constants of package httpapi.
var adapterCodes = []codeStatus{
	{"unsupported_media_type", 415},
	{"malformed_json", 400},
	{"malformed_query", 400},
	{"body_too_large", 413},
	{"method_not_allowed", 405},
	{"malformed_precondition", 400},
	{"unavailable", 503},
}

// TestOpenAPIEnums checks that every enum of openapi.yaml that mirrors a
// catalogue of the library holds exactly that catalogue, as a set: event
// types (identity.EventTypes), scopes (identity.Scopes), token kinds
// (identity.TokenKind), the audit catalogue (identity.AuditActions), the
// audit trail's kinds of actor and target and its outcomes, and problem
// codes (the identity.Code constants and the adapter's own). The lists of codes are checked against the
// constants the two packages declare, so a new code or event type cannot
// be left out of the document.
func TestOpenAPIEnums(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	schema := func(name string) *openapi3.Schema {
		ref := doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Fatalf("components.schemas.%s is missing", name)
		}
		return ref.Value
	}
	all := slices.Concat(libraryCodes, adapterCodes)
	codes := codesOf(all)
	token := doc.Components.Parameters["token"]
	if token == nil || token.Value.Schema == nil {
		t.Fatal("components.parameters.token is missing")
	}
	problemCode := schema("Problem").Properties["code"]
	if problemCode == nil {
		t.Fatal("the Problem schema has no code property")
	}
	tests := []struct {
		name string
		enum []any
		want []string
	}{
		{"schemas.EventType", schema("EventType").Enum, stringsOf(identity.EventTypes())},
		{"schemas.Scope", schema("Scope").Enum, stringsOf(identity.Scopes())},
		{"parameters.token", token.Value.Schema.Value.Enum, []string{identity.AccessToken.String(), identity.IDToken.String()}},
		{"schemas.Problem.code", problemCode.Value.Enum, codes},
		{"schemas.AuditAction", schema("AuditAction").Enum, stringsOf(identity.AuditActions())},
		{"schemas.ActorKind", schema("ActorKind").Enum, stringsOf(identity.ActorKinds())},
		{"schemas.AuditTargetKind", schema("AuditTargetKind").Enum, identity.AuditTargetKinds()},
		{"schemas.AuditRecord.outcome", schema("AuditRecord").Properties["outcome"].Value.Enum,
			stringsOf([]identity.AuditOutcome{identity.OutcomeSuccess, identity.OutcomeFailure})},
	}
	for _, tt := range tests {
		var got []string
		for _, v := range tt.enum {
			s, ok := v.(string)
			if !ok {
				t.Errorf("%s: enum value %v is not a string", tt.name, v)
			}
			got = append(got, s)
		}
		if dup := duplicates(got); len(dup) > 0 {
			t.Errorf("%s: enum lists %q more than once", tt.name, dup)
		}
		if diff := cmp.Diff(sorted(tt.want), sorted(got)); diff != "" {
			t.Errorf("%s: enum differs from the library's catalogue (-want +got):\n%s", tt.name, diff)
		}
	}

	// The prose names the same catalogues.
	for _, e := range identity.EventTypes() {
		if !strings.Contains(schema("EventType").Description, "`"+string(e)+"`") {
			t.Errorf("the EventType description does not describe %s", e)
		}
	}
	bearer := doc.Components.SecuritySchemes[bearerScheme].Value.Description
	for _, s := range identity.Scopes() {
		if !strings.Contains(bearer, string(s)) {
			t.Errorf("the %s description does not name the scope %s", bearerScheme, s)
		}
	}
	desc := strings.Join(strings.Fields(problemCode.Value.Description), " ")
	for _, c := range all {
		if want := fmt.Sprintf("`%s` %d", c.code, c.status); !strings.Contains(desc, want) {
			t.Errorf("the description of Problem.code lacks %q", want)
		}
	}

	// Every operation's scopes are in the Scope enum.
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			scopes, _ := op.Extensions["x-required-scope"].(string)
			for _, s := range strings.Fields(scopes) {
				if !identity.Scope(s).Known() {
					t.Errorf("%s %s: x-required-scope names %q, not a scope of the library", method, path, s)
				}
			}
		}
	}

	// The validator of handler tests knows every code's status.
	if diff := cmp.Diff(sorted(codes), sorted(slices.Collect(maps.Keys(problemCodeStatuses)))); diff != "" {
		t.Errorf("problemCodeStatuses differs from the codes (-want +got):\n%s", diff)
	}
	for _, c := range all {
		if !slices.Contains(problemCodeStatuses[c.code], c.status) {
			t.Errorf("problemCodeStatuses[%q] = %v lacks %d", c.code, problemCodeStatuses[c.code], c.status)
		}
	}

	// The written-out lists are the codes the packages declare.
	declaredLibrary := declaredStrings(t, "..", func(name string, typ ast.Expr) bool {
		id, ok := typ.(*ast.Ident)
		return ok && id.Name == "Code"
	})
	if diff := cmp.Diff(sorted(declaredLibrary), sorted(codesOf(libraryCodes))); diff != "" {
		t.Errorf("libraryCodes differs from the Code constants of package identity (-declared +listed):\n%s", diff)
	}
	declaredAdapter := declaredStrings(t, ".", func(name string, typ ast.Expr) bool {
		return strings.HasPrefix(name, "code") && len(name) > len("code")
	})
	if diff := cmp.Diff(sorted(declaredAdapter), sorted(codesOf(adapterCodes))); diff != "" {
		t.Errorf("adapterCodes differs from the code constants of package httpapi (-declared +listed):\n%s", diff)
	}
}

// declaredStrings returns the values of the string constants that the
// non-test Go files of dir declare and that keep says are wanted, given
// each constant's name and declared type (nil when untyped).
func declaredStrings(t *testing.T, dir string, keep func(name string, typ ast.Expr) bool) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !keep(id.Name, vs.Type) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: constant %s is not a string literal", name, id.Name)
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func codesOf(list []codeStatus) []string {
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.code
	}
	return out
}

func stringsOf[S ~string](values []S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func duplicates(s []string) []string {
	var dup []string
	seen := map[string]bool{}
	for _, v := range s {
		if seen[v] {
			dup = append(dup, v)
		}
		seen[v] = true
	}
	return dup
}
