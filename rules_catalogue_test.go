package identity_test

import (
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/argon2"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store/memstore"
)

// The rules catalogue: every rule the project documents (docs/rules.md,
// docs/api.md, the doc comments), once, with its documented values
// written out here literally, never taken from the code under test, and
// every limit tried on both sides of its boundary. A rule changed by
// mistake fails here, in the package that owns it.

// catalogueRow is one documented rule tried with one value.
type catalogueRow struct {
	rule string // the rule, as the documentation words it
	try  string // the value or case tried
	call func(e *testEnv) error
	code identity.Code // "" when the call must succeed
	// fields, when not nil, are the exact field problems of a
	// CodeInvalid or CodeConflict error.
	fields []identity.FieldError
}

// bidiControls are the bidirectional controls, every one of them:
// U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069. Names (fullName,
// attribute keys, claim names) refuse them with rule control_character.
var bidiControls = []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069}

// bidiNeighbours are characters next to the bidirectional controls, or
// invisible like them, that names accept: U+061B, U+061D, U+200D (zero
// width joiner), U+2010, U+2029, U+202F, U+2065, U+206A.
var bidiNeighbours = []rune{0x061B, 0x061D, 0x200D, 0x2010, 0x2029, 0x202F, 0x2065, 0x206A}

// bidiRows tries each bidirectional control, and each neighbour, in the
// middle of a name that call(name) passes to the library: refused as
// field's control_character, accepted.
func bidiRows(rule, what, field string, call func(name string) func(e *testEnv) error) []catalogueRow {
	var rows []catalogueRow
	for _, r := range bidiControls {
		rows = append(rows, catalogueRow{rule, fmt.Sprintf("%s with U+%04X", what, r), call("a" + string(r) + "b"),
			identity.CodeInvalid, []identity.FieldError{{Field: field, Rule: "control_character"}}})
	}
	for _, r := range bidiNeighbours {
		rows = append(rows, catalogueRow{rule, fmt.Sprintf("%s with U+%04X", what, r), call("a" + string(r) + "b"), "", nil})
	}
	return rows
}

func TestRulesCatalogue(t *testing.T) {
	var rows []catalogueRow
	for _, group := range [][]catalogueRow{
		slugRows(), usernameRows(), emailRows(), fullNameRows(), passwordRows(), passwordPolicyRows(),
		pagingRows(), searchRows(), idRows(), attributeRows(), claimMapperRows(), claimsRows(),
		webhookRows(), apiKeyRows(), clientRows(), importRows(), importedHashRows(), argon2Rows(), smtpRows(),
		idempotencyRows(), sessionRows(), loginRows(), roleRows(),
	} {
		rows = append(rows, group...)
	}
	seen := map[string]bool{}
	for _, row := range rows {
		name := row.rule + ": " + row.try
		if seen[name] {
			t.Fatalf("the catalogue lists %q twice", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			err := row.call(e)
			identitytest.WantCode(t, err, row.code)
			if row.fields != nil {
				identitytest.WantFields(t, err, row.fields)
			}
		})
	}
}

func (e *testEnv) createUser(mod func(*identity.NewUser)) error {
	nu := newUserNamed("newbie")
	mod(&nu)
	_, err := e.ws.CreateUser(e.ctx, nu)
	return err
}

func (e *testEnv) setPolicy(mod func(*identity.PasswordPolicy)) error {
	p := identity.PasswordPolicy{MinLength: 8, MaxLength: 1024}
	mod(&p)
	return e.ws.UpdateSettings(e.ctx, identity.Settings{PasswordPolicy: p})
}

// withPolicy sets a password policy, then creates a user with password.
func (e *testEnv) withPolicy(mod func(*identity.PasswordPolicy), password string) error {
	if err := e.setPolicy(mod); err != nil {
		return err
	}
	return e.createUser(func(u *identity.NewUser) { u.Password = password })
}

func slugRows() []catalogueRow {
	create := func(slug string) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.svc.CreateWorkspace(e.ctx, slug, nil)
			return err
		}
	}
	const rule = "workspace slug: 1-63 of a-z, 0-9, -; starts and ends with a letter or digit"
	return []catalogueRow{
		{rule, "1 character", create("a"), "", nil},
		{rule, "63 characters", create(strings.Repeat("a", 63)), "", nil},
		{rule, "64 characters", create(strings.Repeat("a", 64)), identity.CodeInvalid, field("slug", "max_length")},
		{rule, "empty", create(""), identity.CodeInvalid, field("slug", "required")},
		{rule, "digits and an inner hyphen", create("a-1"), "", nil},
		{rule, "z and 9, the last of their ranges, at both ends", create("z9-9z"), "", nil},
		{rule, "upper case", create("Acme2"), identity.CodeInvalid, field("slug", "pattern")},
		{rule, "underscore", create("ac_me"), identity.CodeInvalid, field("slug", "pattern")},
		{rule, "leading hyphen", create("-acme"), identity.CodeInvalid, field("slug", "pattern")},
		{rule, "trailing hyphen", create("acme-"), identity.CodeInvalid, field("slug", "pattern")},
		{rule, "CheckSlug as CreateWorkspace", func(*testEnv) error { return identity.CheckSlug("Acme") }, identity.CodeInvalid, field("slug", "pattern")},
		{"workspace slug: unique", "taken", create("acme"), identity.CodeConflict, nil},
	}
}

func usernameRows() []catalogueRow {
	name := func(username string) func(e *testEnv) error {
		return func(e *testEnv) error {
			return e.createUser(func(u *identity.NewUser) { u.Username = username })
		}
	}
	const rule = "username: 1-255 of [a-zA-Z0-9._-]"
	return []catalogueRow{
		{rule, "1 character", name("a"), "", nil},
		{rule, "255 characters", name(strings.Repeat("a", 255)), "", nil},
		{rule, "256 characters", name(strings.Repeat("a", 256)), identity.CodeInvalid, field("username", "max_length")},
		{rule, "empty", name(""), identity.CodeInvalid, field("username", "required")},
		{rule, "every allowed class", name("Az.09_-"), "", nil},
		{rule, "the first and last of every range", name("aAzZ09"), "", nil},
		{rule, "plus", name("a+b"), identity.CodeInvalid, field("username", "pattern")},
		{rule, "space", name("a b"), identity.CodeInvalid, field("username", "pattern")},
		{rule, "at sign", name("a@b"), identity.CodeInvalid, field("username", "pattern")},
		{rule, "non-ASCII letter", name("josé"), identity.CodeInvalid, field("username", "pattern")},
		{rule, "NUL", name("a\x00b"), identity.CodeInvalid, field("username", "pattern")},
		{rule, "a right-to-left override", name("a\u202eb"), identity.CodeInvalid, field("username", "pattern")},
		{rule, "a left-to-right mark", name("a\u200eb"), identity.CodeInvalid, field("username", "pattern")},
		{"any text: valid UTF-8", "username", name("a\xff"), identity.CodeInvalid, field("username", "utf8")},
		{"username: unique per workspace ignoring case", "ADA", name("ADA"), identity.CodeConflict, field("username", "taken")},
		{"username: stored as given", "MixedCase", func(e *testEnv) error {
			u, err := e.ws.CreateUser(e.ctx, newUserNamed("MixedCase"))
			if err != nil {
				return err
			}
			return mismatch("username", "MixedCase", u.Username)
		}, "", nil},
	}
}

func emailRows() []catalogueRow {
	email := func(address string) func(e *testEnv) error {
		return func(e *testEnv) error {
			return e.createUser(func(u *identity.NewUser) { u.Email = address })
		}
	}
	const rule = "email: a plain address as net/mail parses it, at most 254"
	return []catalogueRow{
		{rule, "254 characters", email(strings.Repeat("b", 242) + "@example.com"), "", nil},
		{rule, "255 characters", email(strings.Repeat("b", 243) + "@example.com"), identity.CodeInvalid, field("email", "max_length")},
		{rule, "empty", email(""), identity.CodeInvalid, field("email", "required")},
		{rule, "no at sign", email("nobody"), identity.CodeInvalid, field("email", "format")},
		{rule, "display name", email("Newbie <newbie@example.com>"), identity.CodeInvalid, field("email", "format")},
		{rule, "leading space", email(" newbie@example.com"), identity.CodeInvalid, field("email", "format")},
		{rule, "non-ASCII local part", email("zoë@example.com"), "", nil},
		{"any text: valid UTF-8", "email", email("zo\xeb@example.com"), identity.CodeInvalid, field("email", "utf8")},
		{"email: unique per workspace ignoring case", "ADA@EXAMPLE.COM", email("ADA@EXAMPLE.COM"), identity.CodeConflict, field("email", "taken")},
		{"email: a changed email becomes unverified", "UpdateUser", func(e *testEnv) error {
			imported, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{
				Username: "verified", Email: "verified@example.com", FullName: "V", EmailVerified: true,
			}})
			if err != nil {
				return err
			}
			id := imported[0].ID
			same, err := e.ws.UpdateUser(e.ctx, id, identity.UserUpdate{Email: "verified@example.com", FullName: "Renamed"})
			if err != nil {
				return err
			}
			changed, err := e.ws.UpdateUser(e.ctx, id, identity.UserUpdate{Email: "moved@example.com", FullName: "Renamed"})
			if err != nil {
				return err
			}
			return mismatch("EmailVerified after the same email, then a new one", []bool{true, false},
				[]bool{same.EmailVerified, changed.EmailVerified})
		}, "", nil},
	}
}

func fullNameRows() []catalogueRow {
	fullName := func(s string) func(e *testEnv) error {
		return func(e *testEnv) error {
			return e.createUser(func(u *identity.NewUser) { u.FullName = s })
		}
	}
	const rule = "fullName: 1-255, not blank, no control characters, bidirectional controls included"
	return append(bidiRows(rule, "fullName", "fullName", fullName), []catalogueRow{
		{rule, "1 character", fullName("N"), "", nil},
		{rule, "255 code points", fullName(strings.Repeat("é", 255)), "", nil},
		{rule, "256 code points", fullName(strings.Repeat("é", 256)), identity.CodeInvalid, field("fullName", "max_length")},
		{rule, "empty", fullName(""), identity.CodeInvalid, field("fullName", "required")},
		{rule, "blank", fullName(" \t "), identity.CodeInvalid, field("fullName", "required")},
		{rule, "NUL", fullName("Ada\x00"), identity.CodeInvalid, field("fullName", "control_character")},
		{rule, "DEL", fullName("Ada\x7f"), identity.CodeInvalid, field("fullName", "control_character")},
		{rule, "a control character first", fullName("\x01Ada"), identity.CodeInvalid, field("fullName", "control_character")},
		{"any text: valid UTF-8", "fullName", fullName("Ada\xff"), identity.CodeInvalid, field("fullName", "utf8")},
		{"any text: valid UTF-8", "fullName with an encoded surrogate", fullName("Ada\xed\xa0\x80"), identity.CodeInvalid, field("fullName", "utf8")},
		{rule, "a C1 control", fullName("Ada\u0085"), identity.CodeInvalid, field("fullName", "control_character")},
	}...)
}

func passwordRows() []catalogueRow {
	password := func(s string) func(e *testEnv) error {
		return func(e *testEnv) error {
			return e.createUser(func(u *identity.NewUser) { u.Password = s })
		}
	}
	identityUser := func(pw string) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.CreateUser(e.ctx, identity.NewUser{
				Username: "identity1", Email: "identity1@example.com", FullName: "I", Password: pw,
			})
			return err
		}
	}
	const rule = "password: default policy 8-1024 characters"
	return []catalogueRow{
		{rule, "8 characters", password("abcdefgh"), "", nil},
		{rule, "7 characters", password("abcdefg"), identity.CodeInvalid, field("password", "password_min_length")},
		{rule, "8 code points", password("éééééééé"), "", nil},
		{rule, "1024 characters", password(strings.Repeat("a", 1024)), "", nil},
		{rule, "1025 characters", password(strings.Repeat("a", 1025)), identity.CodeInvalid, field("password", "password_max_length")},
		{rule, "empty", password(""), identity.CodeInvalid, field("password", "required")},
		{"any text: valid UTF-8", "password", password("abcdefgh\xff"), identity.CodeInvalid, field("password", "utf8")},
		{"password: not equal to the username or email, ignoring case", "the username", identityUser("IDENTITY1"),
			identity.CodeInvalid, field("password", "password_matches_identity")},
		{"password: not equal to the username or email, ignoring case", "the email", identityUser("Identity1@Example.COM"),
			identity.CodeInvalid, field("password", "password_matches_identity")},
	}
}

func passwordPolicyRows() []catalogueRow {
	policy := func(mod func(*identity.PasswordPolicy)) func(e *testEnv) error {
		return func(e *testEnv) error { return e.setPolicy(mod) }
	}
	with := func(mod func(*identity.PasswordPolicy), password string) func(e *testEnv) error {
		return func(e *testEnv) error { return e.withPolicy(mod, password) }
	}
	const limits = "password policy: at least 4, MaxLength at most 4096"
	const classes = "password policy: optional upper / lower / digit / symbol rules"
	all := func(p *identity.PasswordPolicy) {
		p.RequireUpper, p.RequireLower, p.RequireDigit, p.RequireSymbol = true, true, true, true
	}
	return []catalogueRow{
		{limits, "MinLength 4", policy(func(p *identity.PasswordPolicy) { p.MinLength = 4 }), "", nil},
		{limits, "MinLength 3", policy(func(p *identity.PasswordPolicy) { p.MinLength = 3 }),
			identity.CodeInvalid, field("passwordPolicy.minLength", "range")},
		{limits, "MaxLength 4096", policy(func(p *identity.PasswordPolicy) { p.MaxLength = 4096 }), "", nil},
		{limits, "MaxLength 4097", policy(func(p *identity.PasswordPolicy) { p.MaxLength = 4097 }),
			identity.CodeInvalid, field("passwordPolicy.maxLength", "range")},
		{limits, "MaxLength below MinLength", policy(func(p *identity.PasswordPolicy) { p.MinLength, p.MaxLength = 10, 9 }),
			identity.CodeInvalid, field("passwordPolicy.maxLength", "range")},
		{limits, "MinLength and MaxLength 4", policy(func(p *identity.PasswordPolicy) { p.MinLength, p.MaxLength = 4, 4 }), "", nil},
		{limits, "4 characters at MinLength 4", with(func(p *identity.PasswordPolicy) { p.MinLength = 4 }, "abcd"), "", nil},
		{limits, "3 characters at MinLength 4", with(func(p *identity.PasswordPolicy) { p.MinLength = 4 }, "abc"),
			identity.CodeInvalid, field("password", "password_min_length")},
		{limits, "4096 characters at MaxLength 4096", func(e *testEnv) error {
			long := strings.Repeat("a", 4096)
			if err := e.withPolicy(func(p *identity.PasswordPolicy) { p.MaxLength = 4096 }, long); err != nil {
				return err
			}
			_, err := e.ws.Authenticate(e.ctx, "newbie", long)
			return err
		}, "", nil},
		{limits, "4097 characters at MaxLength 4096", with(func(p *identity.PasswordPolicy) { p.MaxLength = 4096 }, strings.Repeat("a", 4097)),
			identity.CodeInvalid, field("password", "password_max_length")},
		{limits, "11 characters at MaxLength 10", with(func(p *identity.PasswordPolicy) { p.MaxLength = 10 }, "abcdefghijk"),
			identity.CodeInvalid, field("password", "password_max_length")},
		{classes, "no upper case", with(func(p *identity.PasswordPolicy) { p.RequireUpper = true }, "abcdefg1!"),
			identity.CodeInvalid, field("password", "password_uppercase")},
		{classes, "no lower case", with(func(p *identity.PasswordPolicy) { p.RequireLower = true }, "ABCDEFG1!"),
			identity.CodeInvalid, field("password", "password_lowercase")},
		{classes, "no digit", with(func(p *identity.PasswordPolicy) { p.RequireDigit = true }, "abcdefgH!"),
			identity.CodeInvalid, field("password", "password_digit")},
		{classes, "no symbol", with(func(p *identity.PasswordPolicy) { p.RequireSymbol = true }, "abcdefG1"),
			identity.CodeInvalid, field("password", "password_symbol")},
		{classes, "every class", with(all, "Abcdef1!"), "", nil},
		{classes, "every class missing", with(all, "        "), identity.CodeInvalid, []identity.FieldError{
			{Field: "password", Rule: "password_uppercase"}, {Field: "password", Rule: "password_lowercase"},
			{Field: "password", Rule: "password_digit"},
		}},
		{"password policy: AllowUsernameOrEmail permits the username", "newbie1x", func(e *testEnv) error {
			if err := e.setPolicy(func(p *identity.PasswordPolicy) { p.AllowUsernameOrEmail = true }); err != nil {
				return err
			}
			return e.createUser(func(u *identity.NewUser) { u.Username, u.Password = "newbie1x", "NEWBIE1X" })
		}, "", nil},
		{"password policy: a change applies to passwords set afterwards", "login after MinLength 20", func(e *testEnv) error {
			if err := e.setPolicy(func(p *identity.PasswordPolicy) { p.MinLength = 20 }); err != nil {
				return err
			}
			_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
			return err
		}, "", nil},
		{"password policy: default 8-1024, no class rules", "DefaultSettings", func(*testEnv) error {
			want := identity.Settings{PasswordPolicy: identity.PasswordPolicy{MinLength: 8, MaxLength: 1024}}
			return mismatch("DefaultSettings", want, identity.DefaultSettings())
		}, "", nil},
	}
}

func pagingRows() []catalogueRow {
	users := func(page *identity.Page, want identity.List[string]) func(e *testEnv) error {
		return func(e *testEnv) error {
			batch := make([]identity.ImportedUser, 24)
			for i := range batch {
				name := fmt.Sprintf("user%02d", i)
				batch[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "U"}
			}
			if _, err := e.ws.ImportUsers(e.ctx, batch); err != nil {
				return err
			}
			list, err := e.ws.ListUsers(e.ctx, "user", page)
			if err != nil {
				return err
			}
			got := identity.List[string]{Items: []string{}, Total: list.Total, Offset: list.Offset, Limit: list.Limit}
			for _, u := range list.Items {
				got.Items = append(got.Items, u.Username)
			}
			return mismatch("page", want, got)
		}
	}
	names := func(from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, fmt.Sprintf("user%02d", i))
		}
		return out
	}
	hooks := func(page *identity.Page) func(e *testEnv) error {
		return func(e *testEnv) error {
			list, err := e.ws.ListWebhooks(e.ctx, page)
			if err != nil {
				return err
			}
			return mismatch("offset and limit", [2]int{0, 20}, [2]int{list.Offset, list.Limit})
		}
	}
	const rule = "list paging: offset >= 0, 1 <= limit <= 100, defaults 0 and 20, by id ascending"
	return []catalogueRow{
		{rule, "nil page: the first 20", users(nil, identity.List[string]{Items: names(0, 20), Total: 24, Offset: 0, Limit: 20}), "", nil},
		{rule, "offset 0 limit 1", users(&identity.Page{Offset: 0, Limit: 1}, identity.List[string]{Items: names(0, 1), Total: 24, Offset: 0, Limit: 1}), "", nil},
		{rule, "offset 22 limit 100", users(&identity.Page{Offset: 22, Limit: 100}, identity.List[string]{Items: names(22, 24), Total: 24, Offset: 22, Limit: 100}), "", nil},
		{rule, "offset past the end", users(&identity.Page{Offset: 30, Limit: 5}, identity.List[string]{Items: []string{}, Total: 24, Offset: 30, Limit: 5}), "", nil},
		{rule, "limit 0", users(&identity.Page{Offset: 0, Limit: 0}, identity.List[string]{}), identity.CodeInvalid, field("limit", "range")},
		{rule, "limit 101", users(&identity.Page{Offset: 0, Limit: 101}, identity.List[string]{}), identity.CodeInvalid, field("limit", "range")},
		{rule, "offset -1", users(&identity.Page{Offset: -1, Limit: 20}, identity.List[string]{}), identity.CodeInvalid, field("offset", "range")},
		{rule, "webhooks: nil page", hooks(nil), "", nil},
		{rule, "webhooks: limit 101", hooks(&identity.Page{Offset: 0, Limit: 101}), identity.CodeInvalid, field("limit", "range")},
		{rule, "webhooks: offset -1 and limit 0", hooks(&identity.Page{Offset: -1, Limit: 0}), identity.CodeInvalid,
			[]identity.FieldError{{Field: "offset", Rule: "range"}, {Field: "limit", Rule: "range"}}},
	}
}

func searchRows() []catalogueRow {
	search := func(text string, want []string) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{
				{Username: "a_a", Email: "under@example.com", FullName: "Under Score"},
				{Username: "aba", Email: "aba@example.org", FullName: "Percent 100%"},
			})
			if err != nil {
				return err
			}
			list, err := e.ws.ListUsers(e.ctx, text, nil)
			if err != nil {
				return err
			}
			got := []string{}
			for _, u := range list.Items {
				got = append(got, u.Username)
			}
			return mismatch("matches", want, got)
		}
	}
	const rule = "user search: case-insensitive prefix of username, email or full name, taken literally"
	return []catalogueRow{
		{rule, "username prefix, other case", search("AD", []string{"ada"}), "", nil},
		{rule, "not a prefix", search("da", []string{}), "", nil},
		{rule, "email prefix", search("UNDER@", []string{"a_a"}), "", nil},
		{rule, "full name prefix", search("lovelace", []string{}), "", nil},
		{rule, "full name start", search("ada l", []string{"ada"}), "", nil},
		{rule, "underscore is no wildcard", search("a_", []string{"a_a"}), "", nil},
		{rule, "percent is no wildcard", search("%", []string{}), "", nil},
		{rule, "percent inside", search("percent 100%", []string{"aba"}), "", nil},
		{rule, "empty: everyone", search("", []string{"ada", "a_a", "aba"}), "", nil},
		{"any text: valid UTF-8", "search", search("a\xff", nil), identity.CodeInvalid, field("search", "utf8")},
	}
}

func idRows() []catalogueRow {
	const rule = "IDs: positive integers from a per-workspace sequence (users and webhooks each), never reused"
	return []catalogueRow{
		{rule, "users and webhooks count apart", func(e *testEnv) error {
			u := e.user("second")
			first := e.hook(identity.EventUserCreated)
			if err := e.ws.DeleteWebhook(e.ctx, first); err != nil {
				return err
			}
			second := e.hook(identity.EventUserCreated)
			other, err := e.svc.CreateWorkspace(e.ctx, "other", nil)
			if err != nil {
				return err
			}
			o, err := other.CreateUser(e.ctx, newUserNamed("ada"))
			if err != nil {
				return err
			}
			return mismatch("ids (ada, second, hook, hook after a delete, first user of another workspace)",
				[]int64{1, 2, 1, 2, 1}, []int64{e.ada.ID, u.ID, first, second, o.ID})
		}, "", nil},
		{"any operation on a user that does not exist: not_found", "GetUser(0)", func(e *testEnv) error {
			_, err := e.ws.GetUser(e.ctx, 0)
			return err
		}, identity.CodeNotFound, nil},
		{"any operation on a user that does not exist: not_found", "GetUser(-1)", func(e *testEnv) error {
			_, err := e.ws.GetUser(e.ctx, -1)
			return err
		}, identity.CodeNotFound, nil},
		{"any operation on a user that does not exist: not_found", "UpdateUser(999)", func(e *testEnv) error {
			_, err := e.ws.UpdateUser(e.ctx, 999, identity.UserUpdate{Email: "x@example.com", FullName: "X"})
			return err
		}, identity.CodeNotFound, nil},
		{"any operation on a user that does not exist: not_found", "DisableUser(999)", func(e *testEnv) error {
			return e.ws.DisableUser(e.ctx, 999)
		}, identity.CodeNotFound, nil},
		{"deleting a webhook endpoint that does not exist: not_found", "DeleteWebhook(0)", func(e *testEnv) error {
			return e.ws.DeleteWebhook(e.ctx, 0)
		}, identity.CodeNotFound, nil},
		{"deleting a webhook endpoint that does not exist: not_found", "DeleteWebhook(7)", func(e *testEnv) error {
			return e.ws.DeleteWebhook(e.ctx, 7)
		}, identity.CodeNotFound, nil},
		{"deleting a webhook endpoint that does not exist: not_found", "GetWebhook(0)", func(e *testEnv) error {
			_, err := e.ws.GetWebhook(e.ctx, 0)
			return err
		}, identity.CodeNotFound, nil},
	}
}

func clientRows() []catalogueRow {
	create := func(mod func(*identity.NewClient)) func(e *testEnv) error {
		return func(e *testEnv) error {
			nc := identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}}
			mod(&nc)
			_, err := e.ws.CreateClient(e.ctx, nc)
			return err
		}
	}
	name := func(n string) func(e *testEnv) error { return create(func(nc *identity.NewClient) { nc.Name = n }) }
	redirect := func(uris ...string) func(e *testEnv) error {
		return create(func(nc *identity.NewClient) { nc.RedirectURIs = uris })
	}
	postLogout := func(uris ...string) func(e *testEnv) error {
		return create(func(nc *identity.NewClient) { nc.PostLogoutRedirectURIs = uris })
	}
	grants := func(public bool, g ...identity.GrantType) func(e *testEnv) error {
		return create(func(nc *identity.NewClient) { nc.Public, nc.GrantTypes = public, g })
	}
	n := func(count int, format string) []string {
		out := make([]string, count)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}
	const names = "OAuth client name: at most 255, no control characters"
	const uris = "OAuth client redirectUris: 1-20; each absolute, at most 2048, https (http on localhost or a loopback IP), no fragment, no duplicates"
	const logout = "OAuth client postLogoutRedirectUris: 0-20, each as a redirect URI"
	const grant = "OAuth client grantTypes: known, no duplicates; none means authorization_code and refresh_token"
	const combos = "OAuth client grantTypes: client_credentials for confidential clients only, refresh_token only with authorization_code"
	const limit = "OAuth clients: at most 100 a workspace"
	const auth = "OAuth client authentication: an unknown client, a wrong secret and a public client are one unauthenticated error"
	authenticate := func(secretOf func(c identity.CreatedClient) (string, string), public bool) func(e *testEnv) error {
		return func(e *testEnv) error {
			c, err := e.ws.CreateClient(e.ctx, identity.NewClient{Public: public, RedirectURIs: []string{"https://app.example.com/cb"}})
			if err != nil {
				return err
			}
			id, secret := secretOf(c)
			_, err = e.ws.AuthenticateClient(e.ctx, id, secret)
			if err != nil && err.Error() != "identity: invalid client credentials" {
				return fmt.Errorf("message %q, want the one of every refusal", err)
			}
			return err
		}
	}
	return []catalogueRow{
		{names, "empty", name(""), "", nil},
		{names, "255 characters", name(strings.Repeat("é", 255)), "", nil},
		{names, "256 characters", name(strings.Repeat("é", 256)), identity.CodeInvalid, field("name", "max_length")},
		{names, "a control character", name("a\tb"), identity.CodeInvalid, field("name", "control_character")},
		{uris, "none", redirect(), identity.CodeInvalid, field("redirectUris", "required")},
		{uris, "20", redirect(n(20, "https://app.example.com/%d")...), "", nil},
		{uris, "21", redirect(n(21, "https://app.example.com/%d")...), identity.CodeInvalid, field("redirectUris", "range")},
		{uris, "2048 characters", redirect("https://app.example.com/" + strings.Repeat("p", 2024)), "", nil},
		{uris, "2049 characters", redirect("https://app.example.com/" + strings.Repeat("p", 2025)), identity.CodeInvalid, field("redirectUris[0]", "max_length")},
		{uris, "http on localhost", redirect("http://localhost:8080/cb"), "", nil},
		{uris, "http on an IPv6 loopback", redirect("http://[::1]/cb"), "", nil},
		{uris, "http on a public host", redirect("http://app.example.com/cb"), identity.CodeInvalid, field("redirectUris[0]", "loopback_only")},
		{uris, "relative", redirect("/cb"), identity.CodeInvalid, field("redirectUris[0]", "format")},
		{uris, "custom scheme", redirect("com.example.app:/cb"), identity.CodeInvalid, field("redirectUris[0]", "format")},
		{uris, "fragment", redirect("https://app.example.com/cb#x"), identity.CodeInvalid, field("redirectUris[0]", "format")},
		{uris, "duplicate", redirect("https://app.example.com/cb", "https://app.example.com/cb"), identity.CodeInvalid, field("redirectUris[1]", "duplicate")},
		{logout, "none", postLogout(), "", nil},
		{logout, "20", postLogout(n(20, "https://app.example.com/bye/%d")...), "", nil},
		{logout, "21", postLogout(n(21, "https://app.example.com/bye/%d")...), identity.CodeInvalid, field("postLogoutRedirectUris", "range")},
		{logout, "http on a public host", postLogout("http://app.example.com/"), identity.CodeInvalid, field("postLogoutRedirectUris[0]", "loopback_only")},
		{grant, "the default", func(e *testEnv) error {
			c, err := e.ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}})
			if err != nil {
				return err
			}
			return mismatch("GrantTypes", []identity.GrantType{"authorization_code", "refresh_token"}, c.Client.GrantTypes)
		}, "", nil},
		{grant, "unknown", grants(false, "password"), identity.CodeInvalid, field("grantTypes[0]", "unknown")},
		{grant, "duplicate", grants(false, "authorization_code", "authorization_code"), identity.CodeInvalid, field("grantTypes[1]", "duplicate")},
		{combos, "client_credentials, confidential", grants(false, "client_credentials"), "", nil},
		{combos, "client_credentials, public", grants(true, "client_credentials"), identity.CodeInvalid, field("grantTypes[0]", "not_allowed")},
		{combos, "refresh_token with authorization_code", grants(true, "authorization_code", "refresh_token"), "", nil},
		{combos, "refresh_token alone", grants(false, "refresh_token"), identity.CodeInvalid, field("grantTypes[0]", "not_allowed")},
		{combos, "refresh_token with client_credentials", grants(false, "client_credentials", "refresh_token"), identity.CodeInvalid, field("grantTypes[1]", "not_allowed")},
		{limit, "the 101st", func(e *testEnv) error {
			for range 100 {
				if _, err := e.ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}}); err != nil {
					return err
				}
			}
			_, err := e.ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}})
			return err
		}, identity.CodeLimitReached, nil},
		{auth, "the right secret", authenticate(func(c identity.CreatedClient) (string, string) { return c.Client.ID, c.Secret }, false), "", nil},
		{auth, "a wrong secret", authenticate(func(c identity.CreatedClient) (string, string) { return c.Client.ID, c.Secret + "x" }, false), identity.CodeUnauthenticated, nil},
		{auth, "an unknown client", authenticate(func(c identity.CreatedClient) (string, string) { return "idc_0000000000000000", c.Secret }, false), identity.CodeUnauthenticated, nil},
		{auth, "a public client", authenticate(func(c identity.CreatedClient) (string, string) { return c.Client.ID, "" }, true), identity.CodeUnauthenticated, nil},
	}
}

func roleRows() []catalogueRow {
	const rule = "roles: an id no role of the workspace has (ids <= 0 among them) is not_found; assigning twice is no error; removing an unassigned role is not_found"
	return []catalogueRow{
		{rule, "role 0", func(e *testEnv) error { return e.ws.AssignRole(e.ctx, e.ada.ID, 0) }, identity.CodeNotFound, nil},
		{rule, "role -1", func(e *testEnv) error { return e.ws.AssignRole(e.ctx, e.ada.ID, -1) }, identity.CodeNotFound, nil},
		{rule, "role 1, none created", func(e *testEnv) error { return e.ws.AssignRole(e.ctx, e.ada.ID, 1) }, identity.CodeNotFound, nil},
		{rule, "role 1 twice", func(e *testEnv) error {
			e.role("admin")
			for range 2 {
				if err := e.ws.AssignRole(e.ctx, e.ada.ID, 1); err != nil {
					return err
				}
			}
			roles, err := e.ws.ListUserRoles(e.ctx, e.ada.ID)
			if err != nil || len(roles) != 1 {
				return fmt.Errorf("roles %+v, %v; want role 1 once", roles, err)
			}
			return mismatch("roles", identity.UserRole{Role: roles[0].Role, Direct: true, Groups: []identity.GroupRef{}}, roles[0])
		}, "", nil},
		{rule, "remove unassigned", func(e *testEnv) error { e.role("admin"); return e.ws.RemoveRole(e.ctx, e.ada.ID, 1) }, identity.CodeNotFound, nil},
		{rule, "user 0", func(e *testEnv) error { e.role("admin"); return e.ws.AssignRole(e.ctx, 0, 1) }, identity.CodeNotFound, nil},
	}
}

func attributeRows() []catalogueRow {
	set := func(key, value string) func(e *testEnv) error {
		return func(e *testEnv) error { return errOf(e.ws.SetAttribute(e.ctx, e.ada.ID, key, value, nil)) }
	}
	const rule = "attribute: key 1-64, value 0-1024"
	const keyChars = "attribute: a key holds no NUL and no bidirectional control"
	const valueChars = "attribute: a value is any text but NUL"
	key := func(k string) func(e *testEnv) error { return set(k, "v") }
	return append(bidiRows(keyChars, "key", "key", key), []catalogueRow{
		{rule, "key 1 character", set("k", "v"), "", nil},
		{rule, "key 64 code points", set(strings.Repeat("é", 64), "v"), "", nil},
		{rule, "key 65 code points", set(strings.Repeat("é", 65), "v"), identity.CodeInvalid, field("key", "max_length")},
		{rule, "key empty", set("", "v"), identity.CodeInvalid, field("key", "required")},
		{rule, "value empty", set("k", ""), "", nil},
		{rule, "value 1024 code points", set("k", strings.Repeat("ü", 1024)), "", nil},
		{rule, "value 1025 code points", set("k", strings.Repeat("ü", 1025)), identity.CodeInvalid, field("value", "max_length")},
		{"any text: valid UTF-8", "attribute value", set("k", "\xff"), identity.CodeInvalid, field("value", "utf8")},
		{"any text: valid UTF-8", "attribute key", set("k\xff", "v"), identity.CodeInvalid, field("key", "utf8")},
		{"any text: valid UTF-8", "attribute value with an encoded surrogate", set("k", "\xed\xbf\xbf"), identity.CodeInvalid, field("value", "utf8")},
		{keyChars, "key with NUL", set("k\x00", "v"), identity.CodeInvalid, field("key", "control_character")},
		{keyChars, "key of NUL alone", set("\x00", "v"), identity.CodeInvalid, field("key", "control_character")},
		{keyChars, "key with other control characters", set("a\tb\x01\x7f", "v"), "", nil},
		{valueChars, "NUL", set("k", "a\x00b"), identity.CodeInvalid, field("value", "control_character")},
		{valueChars, "NUL alone", set("k", "\x00"), identity.CodeInvalid, field("value", "control_character")},
		{valueChars, "bidirectional controls and other control characters", set("k", "\u202eab\u202c\u2066\u061c\t\n\x01\x7f\u0085"), "", nil},
		{valueChars, "a key and a value both refused", set("k\u200f", "\x00"), identity.CodeInvalid,
			[]identity.FieldError{{Field: "key", Rule: "control_character"}, {Field: "value", Rule: "control_character"}}},
		{"any operation on a user that does not exist: not_found", "SetAttribute(999)", func(e *testEnv) error {
			return errOf(e.ws.SetAttribute(e.ctx, 999, "k", "v", nil))
		}, identity.CodeNotFound, nil},
		{"deleting an attribute that does not exist: not_found", "DeleteAttribute", func(e *testEnv) error {
			return errOf(e.ws.DeleteAttribute(e.ctx, e.ada.ID, "k", nil))
		}, identity.CodeNotFound, nil},
	}...)
}

// fillMappers puts n mappers k00, k01, ... with claim names c00, c01, ...
func (e *testEnv) fillMappers(n int) error {
	for i := range n {
		if _, err := e.ws.SetClaimMapper(e.ctx, fmt.Sprintf("k%02d", i), identity.ClaimMapperSpec{ClaimName: fmt.Sprintf("c%02d", i)}); err != nil {
			return err
		}
	}
	return nil
}

func claimMapperRows() []catalogueRow {
	put := func(key string, spec identity.ClaimMapperSpec) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.SetClaimMapper(e.ctx, key, spec)
			return err
		}
	}
	atLimit := func(key string, spec identity.ClaimMapperSpec) func(e *testEnv) error {
		return func(e *testEnv) error {
			if err := e.fillMappers(20); err != nil {
				return err
			}
			_, err := e.ws.SetClaimMapper(e.ctx, key, spec)
			return err
		}
	}
	afterDept := func(key string, spec identity.ClaimMapperSpec) func(e *testEnv) error {
		return func(e *testEnv) error {
			if _, err := e.ws.SetClaimMapper(e.ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"}); err != nil {
				return err
			}
			_, err := e.ws.SetClaimMapper(e.ctx, key, spec)
			return err
		}
	}
	name := func(n string) identity.ClaimMapperSpec { return identity.ClaimMapperSpec{ClaimName: n} }
	const length = "claim mapper: claim name 1-128, attribute key 1-64"
	const order = "claim mapper: checks in order invalid, reserved_claim, precondition, conflict, limit_reached"
	const chars = "claim mapper: claim name and attribute key hold no NUL and no bidirectional control"
	yes, no := true, false
	rows := bidiRows(chars, "claim name", "claimName", func(n string) func(e *testEnv) error { return put("k", name(n)) })
	rows = append(rows, bidiRows(chars, "attribute key", "attributeKey", func(k string) func(e *testEnv) error { return put(k, name("x")) })...)
	return append(rows, []catalogueRow{
		{chars, "claim name with NUL", put("k", name("x\x00")), identity.CodeInvalid, field("claimName", "control_character")},
		{chars, "attribute key with NUL", put("k\x00", name("x")), identity.CodeInvalid, field("attributeKey", "control_character")},
		{chars, "claim name with other control characters", put("k", name("x\ty\x01")), "", nil},
		{"any text: valid UTF-8", "claim name", put("k", name("x\xff")), identity.CodeInvalid, field("claimName", "utf8")},
		{"any text: valid UTF-8", "mapper attribute key", put("k\xff", name("x")), identity.CodeInvalid, field("attributeKey", "utf8")},
		{length, "claim name 1 character", put("k", name("x")), "", nil},
		{length, "claim name 128 code points", put("k", name(strings.Repeat("é", 128))), "", nil},
		{length, "claim name 129 code points", put("k", name(strings.Repeat("é", 129))), identity.CodeInvalid, field("claimName", "max_length")},
		{length, "claim name empty", put("k", name("")), identity.CodeInvalid, field("claimName", "required")},
		{length, "attribute key 64 characters", put(strings.Repeat("k", 64), name("x")), "", nil},
		{length, "attribute key 65 characters", put(strings.Repeat("k", 65), name("x")), identity.CodeInvalid, field("attributeKey", "max_length")},
		{length, "attribute key empty", put("", name("x")), identity.CodeInvalid, field("attributeKey", "required")},
		{"claim mapper: not reserved, ignoring case", "SUB", put("k", name("SUB")), identity.CodeReservedClaim, nil},
		{"claim mapper: not reserved, ignoring case", "Roles", put("k", name("Roles")), identity.CodeReservedClaim, nil},
		{"claim mapper: unique in the workspace, case-sensitive", "the same name", afterDept("other", name("dept")), identity.CodeConflict, nil},
		{"claim mapper: unique in the workspace, case-sensitive", "another case", afterDept("other", name("Dept")), "", nil},
		{"claim mapper: unique in the workspace, case-sensitive", "re-PUT with its own name", afterDept("department", name("dept")), "", nil},
		{"claim mapper: at most 20 per workspace", "the 20th", func(e *testEnv) error { return e.fillMappers(20) }, "", nil},
		{"claim mapper: at most 20 per workspace", "the 21st", atLimit("k20", name("c20")), identity.CodeLimitReached, nil},
		{"claim mapper: at most 20 per workspace", "updating one at the limit", atLimit("k05", name("renamed")), "", nil},
		{"claim mapper: at most 20 per workspace", "a 21st after a delete", func(e *testEnv) error {
			if err := e.fillMappers(20); err != nil {
				return err
			}
			if err := e.ws.DeleteClaimMapper(e.ctx, "k00"); err != nil {
				return err
			}
			_, err := e.ws.SetClaimMapper(e.ctx, "k20", name("c20"))
			return err
		}, "", nil},
		{order, "invalid before reserved", atLimit("k20", identity.ClaimMapperSpec{ClaimName: "sub" + strings.Repeat("x", 126)}), identity.CodeInvalid, nil},
		{order, "invalid key before reserved", atLimit(strings.Repeat("k", 65), name("sub")), identity.CodeInvalid, nil},
		{order, "reserved before conflict and limit", atLimit("k20", name("sub")), identity.CodeReservedClaim, nil},
		{order, "precondition before conflict and limit", atLimit("k20", identity.ClaimMapperSpec{
			ClaimName: "c01", Precondition: &identity.Precondition{Exists: true},
		}), identity.CodePreconditionFailed, nil},
		{order, "conflict before limit", atLimit("k20", name("c01")), identity.CodeConflict, nil},
		{"claim mapper: a PUT replaces the whole mapper; IncludeInAccess defaults to true, IncludeInID to false", "defaults after flags", func(e *testEnv) error {
			if _, err := e.ws.SetClaimMapper(e.ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept", IncludeInAccess: &no, IncludeInID: &yes}); err != nil {
				return err
			}
			got, err := e.ws.SetClaimMapper(e.ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"})
			if err != nil {
				return err
			}
			stored, err := e.ws.GetClaimMapper(e.ctx, "department")
			if err != nil {
				return err
			}
			want := identity.ClaimMapper{AttributeKey: "department", ClaimName: "dept", IncludeInAccess: true, IncludeInID: false, Version: got.Version}
			return mismatch("mapper", []identity.ClaimMapper{want, want}, []identity.ClaimMapper{got, stored})
		}, "", nil},
		{"deleting a claim mapper that does not exist: not_found", "DeleteClaimMapper", func(e *testEnv) error {
			return e.ws.DeleteClaimMapper(e.ctx, "department")
		}, identity.CodeNotFound, nil},
		{"deleting a claim mapper that does not exist: not_found", "ClaimMapper", func(e *testEnv) error {
			_, err := e.ws.GetClaimMapper(e.ctx, "department")
			return err
		}, identity.CodeNotFound, nil},
	}...)
}

func claimsRows() []catalogueRow {
	claims := func(disable bool, kind identity.TokenKind, want map[string]string) func(e *testEnv) error {
		return func(e *testEnv) error {
			yes, no := true, false
			for _, m := range []struct {
				key, claim, value string
				access, id        bool
			}{
				{"department", "dept", "mathematics", true, false},
				{"tier", "tier", "gold", true, true},
				{"employee", "employee", "E-1815", false, true},
				{"absent", "gone", "", true, true},
			} {
				spec := identity.ClaimMapperSpec{ClaimName: m.claim, IncludeInAccess: &no, IncludeInID: &no}
				if m.access {
					spec.IncludeInAccess = &yes
				}
				if m.id {
					spec.IncludeInID = &yes
				}
				if _, err := e.ws.SetClaimMapper(e.ctx, m.key, spec); err != nil {
					return err
				}
				if m.value != "" {
					if _, err := e.ws.SetAttribute(e.ctx, e.ada.ID, m.key, m.value, nil); err != nil {
						return err
					}
				}
			}
			if disable {
				if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
					return err
				}
			}
			got, err := e.ws.GetClaims(e.ctx, e.ada.ID, kind)
			if err != nil {
				return err
			}
			return mismatch("claims", want, got)
		}
	}
	const rule = "Claims: the mapped attributes of the token kind; a missing attribute contributes nothing"
	return []catalogueRow{
		{rule, "access token", claims(false, identity.AccessToken, map[string]string{"dept": "mathematics", "tier": "gold"}), "", nil},
		{rule, "id token", claims(false, identity.IDToken, map[string]string{"tier": "gold", "employee": "E-1815"}), "", nil},
		{"Claims: does not refuse disabled users", "disabled user", claims(true, identity.AccessToken, map[string]string{"dept": "mathematics", "tier": "gold"}), "", nil},
		{rule, "unknown token kind", claims(false, identity.TokenKind(3), nil), identity.CodeInvalid, field("token", "unknown")},
		{rule, "unknown user", func(e *testEnv) error {
			_, err := e.ws.GetClaims(e.ctx, 999, identity.AccessToken)
			return err
		}, identity.CodeNotFound, nil},
		{rule, "token kind names", func(*testEnv) error {
			got := []string{identity.AccessToken.String(), identity.IDToken.String(), identity.TokenKind(0).String()}
			return mismatch("names", []string{"access", "id", "unknown"}, got)
		}, "", nil},
	}
}

func webhookRows() []catalogueRow {
	create := func(mod func(*identity.NewWebhook)) func(e *testEnv) error {
		return func(e *testEnv) error {
			nw := identity.NewWebhook{URL: "https://hooks.example.com/identity", Events: []string{"user.created"}}
			mod(&nw)
			_, err := e.ws.CreateWebhook(e.ctx, nw)
			return err
		}
	}
	url := func(u string) func(e *testEnv) error {
		return create(func(nw *identity.NewWebhook) { nw.URL = u })
	}
	events := func(ev ...string) func(e *testEnv) error {
		return create(func(nw *identity.NewWebhook) { nw.Events = ev })
	}
	description := func(d string) func(e *testEnv) error {
		return create(func(nw *identity.NewWebhook) { nw.Description = d })
	}
	const urls = "webhook url: absolute https with a host, at most 2048"
	const private = "webhook url: not localhost or a non-public IP literal unless AllowPrivateWebhooks"
	const evs = "webhook events: at least one, known, no duplicates"
	const desc = "webhook description: at most 1024, no control characters but newline and tab"
	return []catalogueRow{
		{urls, "2048 characters", url("https://example.com/" + strings.Repeat("p", 2028)), "", nil},
		{urls, "2049 characters", url("https://example.com/" + strings.Repeat("p", 2029)), identity.CodeInvalid, field("url", "max_length")},
		{urls, "empty", url(""), identity.CodeInvalid, field("url", "required")},
		{urls, "http", url("http://hooks.example.com/identity"), identity.CodeInvalid, field("url", "format")},
		{urls, "relative", url("/identity"), identity.CodeInvalid, field("url", "format")},
		{urls, "no host", url("https:///identity"), identity.CodeInvalid, field("url", "format")},
		{urls, "not parseable", url("https://hooks.example.com:port/identity"), identity.CodeInvalid, field("url", "format")},
		{urls, "opaque", url("https:hooks.example.com"), identity.CodeInvalid, field("url", "format")},
		{urls, "upper-case scheme and a port", url("HTTPS://hooks.example.com:8443/x?y=1"), "", nil},
		{private, "localhost", url("https://localhost/hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "localhost with a dot and in capitals", url("https://LOCALHOST./hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "a name under localhost", url("https://api.localhost/hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "a private IPv4 literal", url("https://10.0.0.1/hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "an IPv6 loopback literal", url("https://[::1]:8443/hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "an IPv4-mapped loopback", url("https://[::ffff:127.0.0.1]/hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "a 6to4 literal", url("https://[2002:7f00:1::1]/hook"), identity.CodeInvalid, field("url", "private_address")},
		{private, "an IPv4-compatible loopback with a port", url("https://[::127.0.0.1]:8443/"), identity.CodeInvalid, field("url", "private_address")},
		{private, "an IPv4-mapped private address", url("https://[::ffff:10.0.0.1]/"), identity.CodeInvalid, field("url", "private_address")},
		{private, "a NAT64 literal of a private address", url("https://[64:ff9b::10.0.0.1]/"), identity.CodeInvalid, field("url", "private_address")},
		{private, "a NAT64 literal of a public address", url("https://[64:ff9b::93.184.215.14]/"), "", nil},
		{private, "a link-local literal with a zone", url("https://[fe80::1%25eth0]/"), identity.CodeInvalid, field("url", "private_address")},
		{private, "a public IPv4 literal", url("https://93.184.215.14/hook"), "", nil},
		{private, "a public IPv6 literal", url("https://[2606:4700::1111]/hook"), "", nil},
		{private, "a host name is not resolved", url("https://localhost.example.com/hook"), "", nil},
		{private, "AllowPrivateWebhooks", func(e *testEnv) error {
			svc, err := identity.New(e.st, &identity.Options{AllowPrivateWebhooks: true, PasswordHashing: &cheapArgon2})
			if err != nil {
				return err
			}
			if !svc.AllowsPrivateWebhooks() || e.svc.AllowsPrivateWebhooks() {
				return fmt.Errorf("AllowsPrivateWebhooks: %v with the option, %v without", svc.AllowsPrivateWebhooks(), e.svc.AllowsPrivateWebhooks())
			}
			ws, err := svc.GetWorkspace(e.ctx, "acme")
			if err != nil {
				return err
			}
			for _, u := range []string{"https://localhost/hook", "https://10.0.0.1/hook", "https://[::1]/hook"} {
				if _, err := ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: u, Events: []string{"user.created"}}); err != nil {
					return err
				}
			}
			return nil
		}, "", nil},
		{evs, "none", events(), identity.CodeInvalid, field("events", "required")},
		{evs, "unknown", events("user.purged"), identity.CodeInvalid, field("events[0]", "unknown")},
		{evs, "duplicate", events("user.created", "user.created"), identity.CodeInvalid, field("events[1]", "duplicate")},
		{evs, "every unknown one listed", events("a", "user.created", "b"), identity.CodeInvalid,
			[]identity.FieldError{{Field: "events[0]", Rule: "unknown"}, {Field: "events[2]", Rule: "unknown"}}},
		{evs, "the message names unknown types only when there are some", func(e *testEnv) error {
			var messages []string
			eleven := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12"}
			long := strings.Repeat("x", 64) + "y"
			for _, ev := range [][]string{{"user.created", "user.created"}, {"a", "user.created", "b"}, eleven, {long}} {
				var ie *identity.Error
				if err := events(ev...)(e); !errors.As(err, &ie) {
					return fmt.Errorf("CreateWebhook with events %q = %v, want an *identity.Error", ev, err)
				}
				messages = append(messages, ie.Message)
			}
			return mismatch("messages", []string{"invalid webhook endpoint", "unknown event types: a, b",
				"unknown event types: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 and 2 more",
				"unknown event types: " + strings.Repeat("x", 64) + "…"}, messages)
		}, "", nil},
		{evs, "the first 100 problems listed, the rest counted", func(e *testEnv) error {
			many := make([]string, 152)
			for i := range many {
				many[i] = "x" + strconv.Itoa(i)
			}
			many[150], many[151] = "user.created", "user.created"
			var ie *identity.Error
			if err := events(many...)(e); !errors.As(err, &ie) {
				return fmt.Errorf("CreateWebhook with 152 events = %v, want an *identity.Error", err)
			}
			last := ie.Fields[len(ie.Fields)-1]
			got := []any{len(ie.Fields), last.Field, last.Rule, ie.Omitted, ie.Message, ie.Error()[len(ie.Error())-14:]}
			return mismatch("the error", []any{100, "events[99]", "unknown", 51,
				"unknown event types: x0, x1, x2, x3, x4, x5, x6, x7, x8, x9 and 140 more", "; and 51 more)"}, got)
		}, "", nil},
		{evs, "all sixteen", events("user.created", "user.updated", "user.disabled", "user.enabled", "user.password.changed",
			"user.role.assigned", "user.role.removed", "login.failed", "session.revoked", "login.succeeded", "token.refresh_reused",
			"user.locked", "user.unlocked", "user.mfa.enrolled", "user.mfa.removed", "user.mfa.reset"), "", nil},
		{evs, "the email job is no event", events("email.verification"), identity.CodeInvalid, field("events[0]", "unknown")},
		{evs, "the reset email job is no event", events("email.password_reset"), identity.CodeInvalid, field("events[0]", "unknown")},
		{desc, "1024 characters", description(strings.Repeat("d", 1024)), "", nil},
		{desc, "1025 characters", description(strings.Repeat("d", 1025)), identity.CodeInvalid, field("description", "max_length")},
		{desc, "newline and tab", description("line one\n\tline two"), "", nil},
		{desc, "carriage return", description("a\rb"), identity.CodeInvalid, field("description", "control_character")},
		{"any text: valid UTF-8", "webhook url", url("https://hooks.example.com/\xff"), identity.CodeInvalid, field("url", "utf8")},
		{"any text: valid UTF-8", "webhook description", description("a\xffb"), identity.CodeInvalid, field("description", "utf8")},
		{"any text: valid UTF-8", "webhook events", events("user.created", "user.\xff"), identity.CodeInvalid, field("events[1]", "utf8")},
	}
}

func apiKeyRows() []catalogueRow {
	create := func(name string, scopes ...identity.Scope) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.CreateAPIKey(e.ctx, name, scopes)
			return err
		}
	}
	const rule = "API key: at least one of the eight scopes, no duplicates; name at most 255"
	return []catalogueRow{
		{rule, "name 255 characters", create(strings.Repeat("n", 255), "users:read"), "", nil},
		{rule, "name 256 characters", create(strings.Repeat("n", 256), "users:read"), identity.CodeInvalid, field("name", "max_length")},
		{rule, "name empty", create("", "users:read"), "", nil},
		{rule, "name with a control character", create("a\nb", "users:read"), identity.CodeInvalid, field("name", "control_character")},
		{rule, "no scope", create("ci"), identity.CodeInvalid, field("scopes", "required")},
		{rule, "unknown scope", create("ci", "users:delete"), identity.CodeInvalid, field("scopes[0]", "unknown")},
		{rule, "duplicate scope", create("ci", "users:read", "users:read"), identity.CodeInvalid, field("scopes[1]", "duplicate")},
		{rule, "all eight", create("ci", "users:read", "users:write", "user_attributes:read", "user_attributes:write",
			"claim_mappers:read", "claim_mappers:write", "webhooks:read", "webhooks:write"), "", nil},
		{"API key: idk_, 16 lower-case hex digits, _ and 43 characters of base64url", "APIKeyID of a secret with a line break", func(*testEnv) error {
			const prefix = "idk_0123456789abcdef_"
			id1, ok1 := identity.APIKeyID(prefix + strings.Repeat("A", 43))
			id2, ok2 := identity.APIKeyID(prefix + strings.Repeat("A", 42) + "\n")
			return mismatch("APIKeyID of a good key and of one with a line break", []any{"0123456789abcdef", true, "", false}, []any{id1, ok1, id2, ok2})
		}, "", nil},
		{"API key: a key of another workspace is forbidden, whether the workspace exists or not", "other workspaces", func(e *testEnv) error {
			if _, err := e.svc.CreateWorkspace(e.ctx, "other", nil); err != nil {
				return err
			}
			created, err := e.ws.CreateAPIKey(e.ctx, "ci", []identity.Scope{"users:read"})
			if err != nil {
				return err
			}
			key := created.Secret
			var codes []identity.Code
			for _, slug := range []string{"other", "missing"} {
				_, err := e.svc.AuthorizeAPIKey(e.ctx, key, slug, "users:read")
				codes = append(codes, identity.ErrorCode(err))
			}
			return mismatch("codes", []identity.Code{"forbidden", "forbidden"}, codes)
		}, "", nil},
		{"API key: a missing scope is forbidden with Error.Scope set", "users:write", func(e *testEnv) error {
			created, err := e.ws.CreateAPIKey(e.ctx, "ci", []identity.Scope{"users:read"})
			if err != nil {
				return err
			}
			key := created.Secret
			_, err = e.svc.AuthorizeAPIKey(e.ctx, key, "acme", "users:read", "users:write")
			got, _ := err.(*identity.Error)
			if got == nil {
				return fmt.Errorf("Authorize = %v, want an *identity.Error", err)
			}
			return mismatch("code and scope", [2]string{"forbidden", "users:write"}, [2]string{string(got.Code), string(got.Scope)})
		}, "", nil},
		{"API key: malformed, unknown or revoked keys are unauthenticated", "revoked", func(e *testEnv) error {
			created, err := e.ws.CreateAPIKey(e.ctx, "ci", []identity.Scope{"users:read"})
			if err != nil {
				return err
			}
			k, key := created.APIKey, created.Secret
			if err := e.ws.RevokeAPIKey(e.ctx, k.ID); err != nil {
				return err
			}
			_, err = e.svc.VerifyAPIKey(e.ctx, key)
			return err
		}, identity.CodeUnauthenticated, nil},
	}
}

func importRows() []catalogueRow {
	batch := func(n int) []identity.ImportedUser {
		out := make([]identity.ImportedUser, n)
		for i := range out {
			name := fmt.Sprintf("u%05d", i)
			out[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "U"}
		}
		return out
	}
	imp := func(users []identity.ImportedUser) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.ImportUsers(e.ctx, users)
			return err
		}
	}
	one := func(mod func(*identity.ImportedUser)) func(e *testEnv) error {
		u := identity.ImportedUser{Username: "imported", Email: "imported@example.com", FullName: "I"}
		mod(&u)
		return imp([]identity.ImportedUser{u})
	}
	const rule = "bulk import: at most 10,000 users a batch, all or nothing"
	return []catalogueRow{
		{rule, "10000 users", imp(batch(10000)), "", nil},
		{rule, "10001 users", imp(batch(10001)), identity.CodeInvalid, field("users", "max_length")},
		{rule, "one bad user stores none", func(e *testEnv) error {
			users := batch(3)
			users[2].Username = "a+b"
			_, err := e.ws.ImportUsers(e.ctx, users)
			if identity.ErrorCode(err) != identity.CodeInvalid {
				return fmt.Errorf("ImportUsers = %v, want invalid", err)
			}
			list, err := e.ws.ListUsers(e.ctx, "", nil)
			if err != nil {
				return err
			}
			return mismatch("users stored", 1, list.Total)
		}, "", nil},
		{rule, "one taken username stores none", imp(append(batch(2), identity.ImportedUser{Username: "ADA", Email: "x@example.com", FullName: "X"})),
			identity.CodeConflict, field("users[2].username", "taken")},
		{rule, "twice in the batch", imp(append(batch(1), identity.ImportedUser{Username: "U00000", Email: "x@example.com", FullName: "X"})),
			identity.CodeConflict, field("users[1].username", "duplicate")},
		{rule, "username and email both twice", imp([]identity.ImportedUser{
			{Username: "dup", Email: "dup@example.com", FullName: "D"},
			{Username: "DUP", Email: "DUP@example.com", FullName: "D"},
		}), identity.CodeConflict, []identity.FieldError{{Field: "users[1].username", Rule: "duplicate"}, {Field: "users[1].email", Rule: "duplicate"}}},
		{"bulk import: attributes keys 1-64, values 0-1024", "key 65", one(func(u *identity.ImportedUser) {
			u.Attributes = map[string]string{strings.Repeat("k", 65): "v"}
		}), identity.CodeInvalid, field("users[0].attributes", "max_length")},
		{"bulk import: attributes keys 1-64, values 0-1024", "value 1025", one(func(u *identity.ImportedUser) {
			u.Attributes = map[string]string{"k": strings.Repeat("v", 1025)}
		}), identity.CodeInvalid, field("users[0].attributes.k", "max_length")},
		{"bulk import: attributes keys 1-64, values 0-1024", "key 64 and value 1024", one(func(u *identity.ImportedUser) {
			u.Attributes = map[string]string{strings.Repeat("k", 64): strings.Repeat("v", 1024)}
		}), "", nil},
		{"bulk import: attributes as SetAttribute takes them", "key with a bidirectional control", one(func(u *identity.ImportedUser) {
			u.Attributes = map[string]string{"k\u2067": "v"}
		}), identity.CodeInvalid, field("users[0].attributes", "control_character")},
		{"bulk import: attributes as SetAttribute takes them", "value with NUL", one(func(u *identity.ImportedUser) {
			u.Attributes = map[string]string{"k": "\x00"}
		}), identity.CodeInvalid, field("users[0].attributes.k", "control_character")},
		{"bulk import: username, email and fullName follow the rules of CreateUser", "fullName with a bidirectional control", one(func(u *identity.ImportedUser) {
			u.FullName = "I\u202e"
		}), identity.CodeInvalid, field("users[0].fullName", "control_character")},
		{"bulk import: roles are names or positive ids", "role 0", one(func(u *identity.ImportedUser) {
			u.Roles = []identity.RoleRef{identity.RoleName("admin"), identity.RoleID(0)}
		}), identity.CodeInvalid, field("users[0].roles[1]", "range")},
		{"bulk import: roles are names or positive ids", "a role name with a capital", one(func(u *identity.ImportedUser) {
			u.Roles = []identity.RoleRef{identity.RoleName("Admin")}
		}), identity.CodeInvalid, field("users[0].roles[0]", "pattern")},
		{"bulk import: groups are names", "a group name of 65 characters", one(func(u *identity.ImportedUser) {
			u.Groups = []string{strings.Repeat("g", 65)}
		}), identity.CodeInvalid, field("users[0].groups[0]", "max_length")},
		{"bulk import: username, email and fullName follow the rules of CreateUser", "username with plus", one(func(u *identity.ImportedUser) {
			u.Username = "a+b"
		}), identity.CodeInvalid, field("users[0].username", "pattern")},
	}
}

func importedHashRows() []catalogueRow {
	hash := func(h string) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{
				Username: "imported", Email: "imported@example.com", FullName: "I", PasswordHash: h,
			}})
			return err
		}
	}
	const salt, key = "c2FsdHNhbHRzYWx0", "4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"
	const rule = "imported hashes: argon2id at most 1 GiB and t=64, bcrypt cost at most 16, PBKDF2 at most 5,000,000 iterations"
	const argon2Shape = "imported hashes: argon2id $argon2id$v=19$m,t,p$salt$key with p at most 255, a salt of at least 8 bytes, a key of 16-128 bytes, both base64"
	const pbkdf2Shape = "imported hashes: PBKDF2 with SHA-1, SHA-256 or SHA-512, at least 1 iteration, a key of 16-128 bytes, base64"
	// login imports the hash and logs in with importedPassword.
	login := func(h string) func(e *testEnv) error {
		return func(e *testEnv) error {
			if err := hash(h)(e); err != nil {
				return err
			}
			_, err := e.ws.Authenticate(e.ctx, "imported", importedPassword)
			return err
		}
	}
	bad := field("users[0].passwordHash", "format")
	return []catalogueRow{
		{rule, "argon2id m=1048576", hash("$argon2id$v=19$m=1048576,t=1,p=1$" + salt + "$" + key), "", nil},
		{rule, "argon2id m=1048577", hash("$argon2id$v=19$m=1048577,t=1,p=1$" + salt + "$" + key), identity.CodeInvalid, bad},
		{rule, "argon2id t=64", hash("$argon2id$v=19$m=128,t=64,p=1$" + salt + "$" + key), "", nil},
		{rule, "argon2id t=65", hash("$argon2id$v=19$m=128,t=65,p=1$" + salt + "$" + key), identity.CodeInvalid, bad},
		{rule, "bcrypt cost 16", hash("$2a$16$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"), "", nil},
		{rule, "bcrypt cost 17", hash("$2b$17$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"), identity.CodeInvalid, bad},
		{rule, "bcrypt 2y", hash("$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"), "", nil},
		{rule, "Django PBKDF2 5000000", hash("pbkdf2_sha256$5000000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA="), "", nil},
		{rule, "Django PBKDF2 5000001", hash("pbkdf2_sha256$5000001$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA="), identity.CodeInvalid, bad},
		{rule, "PHC PBKDF2 5000000", hash("$pbkdf2-sha256$i=5000000,l=32$AAECAwQFBgcICQoLDA0ODw$djG.Q.ej.HjLOYOxC3tE9wAT5oosn6uV8P/9fG/jzzI"), "", nil},
		{rule, "passlib PBKDF2 5000001", hash("$pbkdf2-sha256$5000001$AAECAwQFBgcICQoLDA0ODw$djG.Q.ej.HjLOYOxC3tE9wAT5oosn6uV8P/9fG/jzzI"), identity.CodeInvalid, bad},
		{rule, "passlib pbkdf2 (SHA-1)", hash("$pbkdf2$1200$AAECAwQFBgcICQoLDA0ODw$djG.Q.ej.HjLOYOxC3tE9wAT5oos"), "", nil},
		{rule, "PBKDF2 with MD5", hash("pbkdf2_md5$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA="), identity.CodeInvalid, bad},
		{rule, "unknown scheme", hash("$1$saltsalt$hash"), identity.CodeInvalid, bad},
		{argon2Shape, "p=255", login(argon2PHC(255, 16, 32)), "", nil},
		{argon2Shape, "p=256", hash(strings.Replace(argon2PHC(255, 16, 32), "p=255", "p=256", 1)), identity.CodeInvalid, bad},
		{argon2Shape, "salt 8 bytes", login(argon2PHC(1, 8, 32)), "", nil},
		{argon2Shape, "salt 7 bytes", hash(argon2PHC(1, 7, 32)), identity.CodeInvalid, bad},
		{argon2Shape, "key 16 bytes", login(argon2PHC(1, 16, 16)), "", nil},
		{argon2Shape, "key 128 bytes", login(argon2PHC(1, 16, 128)), "", nil},
		{argon2Shape, "key 15 bytes", hash(argon2PHC(1, 16, 15)), identity.CodeInvalid, bad},
		{argon2Shape, "key 129 bytes", hash(argon2PHC(1, 16, 129)), identity.CodeInvalid, bad},
		{argon2Shape, "a seventh part", hash(argon2PHC(1, 16, 32) + "$extra"), identity.CodeInvalid, bad},
		// 12 good characters and a bad one: a decoder that stops at the
		// error has 9 bytes; 24 and a bad one, 18.
		{argon2Shape, "salt not base64", hash("$argon2id$v=19$m=64,t=1,p=1$AAAAAAAAAAAA!$" + strings.Repeat("A", 43)), identity.CodeInvalid, bad},
		{argon2Shape, "key not base64", hash("$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + strings.Repeat("A", 24) + "!"), identity.CodeInvalid, bad},
		{pbkdf2Shape, "1 iteration", login(pbkdf2PHC("sha256", 1, 32)), "", nil},
		{pbkdf2Shape, "key 16 bytes", login(pbkdf2PHC("sha256", 1000, 16)), "", nil},
		{pbkdf2Shape, "key 128 bytes", login(pbkdf2PHC("sha256", 1000, 128)), "", nil},
		{pbkdf2Shape, "key 15 bytes", hash(pbkdf2PHC("sha256", 1000, 15)), identity.CodeInvalid, bad},
		{pbkdf2Shape, "MD5", hash(strings.Replace(pbkdf2PHC("sha256", 1000, 32), "pbkdf2-sha256", "pbkdf2-md5", 1)), identity.CodeInvalid, bad},
		{pbkdf2Shape, "salt not base64", hash("$pbkdf2-sha256$1000$AAAAAAAA!$" + strings.Repeat("A", 43)), identity.CodeInvalid, bad},
		{"imported hashes: absent means no password", "empty hash", func(e *testEnv) error {
			if err := hash("")(e); err != nil {
				return err
			}
			_, err := e.ws.Authenticate(e.ctx, "imported", "")
			return err
		}, identity.CodeUnauthenticated, nil},
	}
}

// importedPassword is the password of the hashes argon2PHC and pbkdf2PHC
// build.
const importedPassword = "imported secret"

// argon2PHC returns an argon2id PHC string of importedPassword computed
// here with x/crypto/argon2, not by the library: m=2040 KiB (8 KiB for
// each of up to 255 lanes), t=1, p lanes, a salt of saltLen bytes and a
// key of keyLen bytes.
func argon2PHC(p uint8, saltLen, keyLen int) string {
	salt := []byte(strings.Repeat("s", saltLen))
	key := argon2.IDKey([]byte(importedPassword), salt, 1, 2040, p, uint32(keyLen))
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=19$m=2040,t=1,p=%d$%s$%s", p, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// pbkdf2PHC returns a PHC PBKDF2 string of importedPassword computed here
// with crypto/pbkdf2: digest (sha1, sha256 or sha512), iter iterations, a
// 16-byte salt and a key of keyLen bytes.
func pbkdf2PHC(digest string, iter, keyLen int) string {
	h := map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}[digest]
	salt := []byte("0123456789abcdef")
	key, err := pbkdf2.Key(h, importedPassword, salt, iter, keyLen)
	if err != nil {
		panic(err)
	}
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$pbkdf2-%s$i=%d,l=%d$%s$%s", digest, iter, keyLen, b64.EncodeToString(salt), b64.EncodeToString(key))
}

func argon2Rows() []catalogueRow {
	params := func(m, t uint32, p uint8) func(e *testEnv) error {
		return func(*testEnv) error {
			_, err := identity.New(memstore.New(), &identity.Options{PasswordHashing: &identity.Argon2Params{Memory: m, Time: t, Threads: p}})
			return err
		}
	}
	const rule = "argon2id parameters: memory 8*threads KiB to 1 GiB, time 1-64, threads at least 1; default m=19 MiB, t=2, p=1"
	return []catalogueRow{
		{rule, "m=8 p=1", params(8, 1, 1), "", nil},
		{rule, "m=7 p=1", params(7, 1, 1), identity.CodeInvalid, field("memory", "range")},
		{rule, "m=16 p=2", params(16, 1, 2), "", nil},
		{rule, "m=15 p=2", params(15, 1, 2), identity.CodeInvalid, field("memory", "range")},
		{rule, "m=1048576", params(1048576, 1, 1), "", nil},
		{rule, "m=1048577", params(1048577, 1, 1), identity.CodeInvalid, field("memory", "range")},
		{rule, "t=64", params(64, 64, 1), "", nil},
		{rule, "t=65", params(64, 65, 1), identity.CodeInvalid, field("time", "range")},
		{rule, "t=0", params(64, 0, 1), identity.CodeInvalid, field("time", "range")},
		{rule, "p=0", params(64, 1, 0), identity.CodeInvalid, field("threads", "range")},
		{rule, "the default", func(*testEnv) error {
			svc, err := identity.New(memstore.New(), nil)
			if err != nil {
				return err
			}
			want := identity.Argon2Params{Memory: 19456, Time: 2, Threads: 1}
			return mismatch("parameters", []identity.Argon2Params{want, want}, []identity.Argon2Params{identity.DefaultArgon2Params, svc.PasswordHashing()})
		}, "", nil},
	}
}

func smtpRows() []catalogueRow {
	set := func(mod func(*identity.SMTPSettings)) func(e *testEnv) error {
		return func(e *testEnv) error {
			m := identity.SMTPSettings{
				Host: "smtp.example.com", Port: 587, From: "noreply@example.com",
				VerifyURL: "https://app.example.com/verify?token={token}",
			}
			mod(&m)
			return e.ws.UpdateSettings(e.ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: &m})
		}
	}
	const port = "SMTP settings: port 1-65535"
	const tls = "SMTP settings: tls starttls (default), tls, or none for localhost or a loopback IP only"
	const lifetime = "SMTP settings: token lifetime 0 (24 h) or 5 min to 7 days"
	const verify = "SMTP settings: verifyUrl an https URL (http on a loopback host) containing {token}, at most 2048"
	const creds = "SMTP settings: username at most 255 and password at most 1024, both or neither"
	verifyPrefix := "https://app.example.com/verify?token={token}&p="
	return []catalogueRow{
		{port, "1", set(func(m *identity.SMTPSettings) { m.Port = 1 }), "", nil},
		{port, "65535", set(func(m *identity.SMTPSettings) { m.Port = 65535 }), "", nil},
		{port, "0", set(func(m *identity.SMTPSettings) { m.Port = 0 }), identity.CodeInvalid, field("smtp.port", "range")},
		{port, "65536", set(func(m *identity.SMTPSettings) { m.Port = 65536 }), identity.CodeInvalid, field("smtp.port", "range")},
		{tls, "tls", set(func(m *identity.SMTPSettings) { m.TLS = "tls" }), "", nil},
		{tls, "starttls", set(func(m *identity.SMTPSettings) { m.TLS = "starttls" }), "", nil},
		{tls, "none on a public host", set(func(m *identity.SMTPSettings) { m.TLS = "none" }), identity.CodeInvalid, field("smtp.tls", "loopback_only")},
		{tls, "none on localhost", set(func(m *identity.SMTPSettings) { m.TLS, m.Host = "none", "localhost" }), "", nil},
		{tls, "none on 127.0.0.1", set(func(m *identity.SMTPSettings) { m.TLS, m.Host = "none", "127.0.0.1" }), "", nil},
		{tls, "none on ::1", set(func(m *identity.SMTPSettings) { m.TLS, m.Host = "none", "::1" }), "", nil},
		{tls, "none on 10.0.0.1", set(func(m *identity.SMTPSettings) { m.TLS, m.Host = "none", "10.0.0.1" }), identity.CodeInvalid, field("smtp.tls", "loopback_only")},
		{tls, "ssl", set(func(m *identity.SMTPSettings) { m.TLS = "ssl" }), identity.CodeInvalid, field("smtp.tls", "unknown")},
		{lifetime, "5 min", set(func(m *identity.SMTPSettings) { m.TokenLifetime = 5 * time.Minute }), "", nil},
		{lifetime, "4 min 59 s", set(func(m *identity.SMTPSettings) { m.TokenLifetime = 4*time.Minute + 59*time.Second }), identity.CodeInvalid, field("smtp.tokenLifetime", "range")},
		{lifetime, "7 days", set(func(m *identity.SMTPSettings) { m.TokenLifetime = 7 * 24 * time.Hour }), "", nil},
		{lifetime, "7 days 1 s", set(func(m *identity.SMTPSettings) { m.TokenLifetime = 7*24*time.Hour + time.Second }), identity.CodeInvalid, field("smtp.tokenLifetime", "range")},
		{verify, "2048 characters", set(func(m *identity.SMTPSettings) {
			m.VerifyURL = verifyPrefix + strings.Repeat("p", 2048-len(verifyPrefix))
		}), "", nil},
		{verify, "2049 characters", set(func(m *identity.SMTPSettings) {
			m.VerifyURL = verifyPrefix + strings.Repeat("p", 2049-len(verifyPrefix))
		}),
			identity.CodeInvalid, field("smtp.verifyUrl", "max_length")},
		{verify, "no {token}", set(func(m *identity.SMTPSettings) { m.VerifyURL = "https://app.example.com/verify" }), identity.CodeInvalid, field("smtp.verifyUrl", "format")},
		{verify, "http on a public host", set(func(m *identity.SMTPSettings) { m.VerifyURL = "http://app.example.com/v?t={token}" }),
			identity.CodeInvalid, field("smtp.verifyUrl", "loopback_only")},
		{verify, "http on localhost", set(func(m *identity.SMTPSettings) { m.VerifyURL = "http://localhost:8080/v?t={token}" }), "", nil},
		{verify, "ftp", set(func(m *identity.SMTPSettings) { m.VerifyURL = "ftp://app.example.com/{token}" }), identity.CodeInvalid, field("smtp.verifyUrl", "format")},
		{verify, "no host", set(func(m *identity.SMTPSettings) { m.VerifyURL = "https:///verify?token={token}" }), identity.CodeInvalid, field("smtp.verifyUrl", "format")},
		{verify, "user information", set(func(m *identity.SMTPSettings) { m.VerifyURL = "https://u:p@app.example.com/{token}" }), identity.CodeInvalid, field("smtp.verifyUrl", "format")},
		{creds, "username 255, password 1024", set(func(m *identity.SMTPSettings) {
			m.Username, m.Password = strings.Repeat("u", 255), strings.Repeat("p", 1024)
		}), "", nil},
		{creds, "username 256", set(func(m *identity.SMTPSettings) { m.Username, m.Password = strings.Repeat("u", 256), "secret" }), identity.CodeInvalid, field("smtp.username", "max_length")},
		{creds, "password 1025", set(func(m *identity.SMTPSettings) { m.Username, m.Password = "mailer", strings.Repeat("p", 1025) }), identity.CodeInvalid, field("smtp.password", "max_length")},
		{creds, "username alone", set(func(m *identity.SMTPSettings) { m.Username = "mailer" }), identity.CodeInvalid, field("smtp.password", "required")},
		{creds, "password alone", set(func(m *identity.SMTPSettings) { m.Password = "secret" }), identity.CodeInvalid, field("smtp.username", "required")},
		{"SMTP settings: from a plain address, fromName at most 255", "from with a display name", set(func(m *identity.SMTPSettings) { m.From = "Acme <noreply@example.com>" }),
			identity.CodeInvalid, field("smtp.from", "format")},
		{"SMTP settings: from a plain address, fromName at most 255", "fromName 255", set(func(m *identity.SMTPSettings) { m.FromName = strings.Repeat("f", 255) }), "", nil},
		{"SMTP settings: from a plain address, fromName at most 255", "fromName 256", set(func(m *identity.SMTPSettings) { m.FromName = strings.Repeat("f", 256) }),
			identity.CodeInvalid, field("smtp.fromName", "max_length")},
		{"SMTP settings: the password is write-only, kept while host and username stay", "write-only and kept", func(e *testEnv) error {
			if err := set(func(m *identity.SMTPSettings) { m.Username, m.Password = "mailer", "secret" })(e); err != nil {
				return err
			}
			if err := set(func(m *identity.SMTPSettings) { m.Username, m.Port = "mailer", 2525 })(e); err != nil {
				return err
			}
			s, err := e.ws.GetSettings(e.ctx)
			if err != nil {
				return err
			}
			return mismatch("password, passwordSet, port", []any{"", true, 2525}, []any{s.SMTP.Password, s.SMTP.PasswordSet, s.SMTP.Port})
		}, "", nil},
		{"SMTP settings: the password is write-only, kept while host and username stay", "asked again for another host", func(e *testEnv) error {
			if err := set(func(m *identity.SMTPSettings) { m.Username, m.Password = "mailer", "secret" })(e); err != nil {
				return err
			}
			return set(func(m *identity.SMTPSettings) { m.Username, m.Host = "mailer", "smtp.elsewhere.example" })(e)
		}, identity.CodeInvalid, field("smtp.password", "required")},
		{"SMTP settings: the password is write-only, kept while host and username stay", "asked again for another username", func(e *testEnv) error {
			if err := set(func(m *identity.SMTPSettings) { m.Username, m.Password = "mailer", "secret" })(e); err != nil {
				return err
			}
			return set(func(m *identity.SMTPSettings) { m.Username = "other" })(e)
		}, identity.CodeInvalid, field("smtp.password", "required")},
	}
}

func idempotencyRows() []catalogueRow {
	create := func(idem identity.Idempotency) func(e *testEnv) error {
		return func(e *testEnv) error {
			nu := newUserNamed("newbie")
			nu.Idempotency = &idem
			_, err := e.ws.CreateUser(e.ctx, nu)
			return err
		}
	}
	key := func(k string) func(e *testEnv) error { return create(identity.Idempotency{Scope: "client", Key: k}) }
	// replay creates a user with a key, moves the clock by after and
	// retries: a replay returns the first user, an expired key runs afresh
	// (and finds the username taken).
	replay := func(after time.Duration) func(e *testEnv) error {
		return func(e *testEnv) error {
			nu := newUserNamed("newbie")
			nu.Idempotency = &identity.Idempotency{Scope: "client", Key: "k-1", Fingerprint: []byte("body")}
			first, err := e.ws.CreateUser(e.ctx, nu)
			if err != nil {
				return err
			}
			e.clock.Advance(after)
			again, err := e.ws.CreateUser(e.ctx, nu)
			if err != nil {
				return err
			}
			return mismatch("replayed user", first, again)
		}
	}
	const rule = "idempotency key: 1-255 visible ASCII (! to ~); scope at most 255; fingerprint at most 256 bytes"
	return []catalogueRow{
		{rule, "key 255", key(strings.Repeat("k", 255)), "", nil},
		{rule, "key 256", key(strings.Repeat("k", 256)), identity.CodeInvalid, field("Idempotency-Key", "max_length")},
		{rule, "key empty", key(""), identity.CodeInvalid, field("Idempotency-Key", "required")},
		{rule, "key ! and ~", key("!~"), "", nil},
		{rule, "key with a space", key("a b"), identity.CodeInvalid, field("Idempotency-Key", "pattern")},
		{rule, "key with DEL", key("a\x7f"), identity.CodeInvalid, field("Idempotency-Key", "pattern")},
		{rule, "key non-ASCII", key("é"), identity.CodeInvalid, field("Idempotency-Key", "pattern")},
		{rule, "scope 255", create(identity.Idempotency{Scope: strings.Repeat("s", 255), Key: "k"}), "", nil},
		{rule, "scope 256", create(identity.Idempotency{Scope: strings.Repeat("s", 256), Key: "k"}), identity.CodeInvalid, field("idempotency.scope", "max_length")},
		{rule, "fingerprint 256 bytes", create(identity.Idempotency{Scope: "client", Key: "k", Fingerprint: make([]byte, 256)}), "", nil},
		{rule, "fingerprint 257 bytes", create(identity.Idempotency{Scope: "client", Key: "k", Fingerprint: make([]byte, 257)}),
			identity.CodeInvalid, field("idempotency.fingerprint", "max_length")},
		{"idempotency key: outcomes kept 24 h", "a retry after 24 h less 1 µs", replay(24*time.Hour - time.Microsecond), "", nil},
		{"idempotency key: outcomes kept 24 h", "a retry after 24 h", replay(24 * time.Hour), identity.CodeConflict, nil},
		{"idempotency key: another body is idempotency_key_reused", "another fingerprint", func(e *testEnv) error {
			nu := newUserNamed("newbie")
			nu.Idempotency = &identity.Idempotency{Scope: "client", Key: "k-1", Fingerprint: []byte("body")}
			if _, err := e.ws.CreateUser(e.ctx, nu); err != nil {
				return err
			}
			nu.Idempotency.Fingerprint = []byte("other body")
			_, err := e.ws.CreateUser(e.ctx, nu)
			return err
		}, identity.CodeIdempotencyKeyReused, nil},
	}
}

func sessionRows() []catalogueRow {
	// verifyAt logs ada in, moves the clock by after and verifies the
	// token.
	verifyAt := func(opts *identity.Options, after time.Duration) func(e *testEnv) error {
		return func(e *testEnv) error {
			if opts != nil {
				svc, err := identity.New(e.st, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2, SessionLifetime: opts.SessionLifetime})
				if err != nil {
					return err
				}
				if e.ws, err = svc.GetWorkspace(e.ctx, "acme"); err != nil {
					return err
				}
			}
			created, err := e.ws.Login(e.ctx, "ada", adaPassword)
			if err != nil {
				return err
			}
			token := created.Secret
			e.clock.Advance(after)
			_, err = e.ws.VerifySession(e.ctx, token)
			return err
		}
	}
	const rule = "sessions: default lifetime 24 h, Options.SessionLifetime"
	return []catalogueRow{
		{rule, "24 h less 1 µs", verifyAt(nil, 24*time.Hour-time.Microsecond), "", nil},
		{rule, "24 h", verifyAt(nil, 24*time.Hour), identity.CodeUnauthenticated, nil},
		{rule, "SessionLifetime 2 h: 2 h less 1 µs", verifyAt(&identity.Options{SessionLifetime: 2 * time.Hour}, 2*time.Hour-time.Microsecond), "", nil},
		{rule, "SessionLifetime 2 h: 2 h", verifyAt(&identity.Options{SessionLifetime: 2 * time.Hour}, 2*time.Hour), identity.CodeUnauthenticated, nil},
		{rule, "SessionLifetime 48 h: 47 h", verifyAt(&identity.Options{SessionLifetime: 48 * time.Hour}, 47*time.Hour), "", nil},
		{rule, "SessionLifetime negative: 24 h", verifyAt(&identity.Options{SessionLifetime: -time.Hour}, 24*time.Hour-time.Microsecond), "", nil},
		{"sessions: an unknown session is unauthenticated", "a well-formed token of no session", func(e *testEnv) error {
			_, err := e.ws.VerifySession(e.ctx, "ids_0123456789abcdef_"+strings.Repeat("A", 43))
			return err
		}, identity.CodeUnauthenticated, nil},
		{"sessions: VerifySession refuses disabled users", "disabled", func(e *testEnv) error {
			created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
			if err != nil {
				return err
			}
			token := created.Secret
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				return err
			}
			_, err = e.ws.VerifySession(e.ctx, token)
			return err
		}, identity.CodeUnauthenticated, nil},
		{"sessions: StartSession is for enabled users", "disabled", func(e *testEnv) error {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				return err
			}
			_, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
			return err
		}, identity.CodeForbidden, nil},
	}
}

func loginRows() []catalogueRow {
	auth := func(login, password string) func(e *testEnv) error {
		return func(e *testEnv) error {
			_, err := e.ws.Authenticate(e.ctx, login, password)
			return err
		}
	}
	const rule = "Authenticate: username or email ignoring case; a login containing @ is an email"
	const refused = "Authenticate: unauthenticated alike for every refusal"
	return []catalogueRow{
		{rule, "username", auth("ada", adaPassword), "", nil},
		{rule, "username in capitals", auth("ADA", adaPassword), "", nil},
		{rule, "email in capitals", auth("ADA@EXAMPLE.COM", adaPassword), "", nil},
		{rule, "an @ login is not a username", auth("ada@", adaPassword), identity.CodeUnauthenticated, nil},
		{refused, "wrong password", auth("ada", "analytical engines"), identity.CodeUnauthenticated, nil},
		{refused, "unknown user", auth("ghost", adaPassword), identity.CodeUnauthenticated, nil},
		{refused, "empty password", auth("ada", ""), identity.CodeUnauthenticated, nil},
		{refused, "a password over 4096", auth("ada", strings.Repeat("a", 4097)), identity.CodeUnauthenticated, nil},
		{refused, "a password not UTF-8", auth("ada", adaPassword+"\xff"), identity.CodeUnauthenticated, nil},
		{refused, "disabled user", func(e *testEnv) error {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				return err
			}
			return auth("ada", adaPassword)(e)
		}, identity.CodeUnauthenticated, nil},
	}
}

// TestReservedClaimsCatalogue: every documented reserved claim name is
// refused, in any case, and ReservedClaims lists exactly them.
func TestReservedClaimsCatalogue(t *testing.T) {
	documented := []struct {
		source string
		names  []string
	}{
		{"RFC 7519", []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti"}},
		{"OpenID Connect Core, ID token", []string{"azp", "nonce", "auth_time", "acr", "amr", "at_hash", "c_hash", "s_hash", "sub_jwk"}},
		{"OpenID Connect Core, standard claims", []string{"name", "given_name", "family_name", "middle_name", "nickname",
			"preferred_username", "profile", "picture", "website", "email", "email_verified", "gender", "birthdate",
			"zoneinfo", "locale", "phone_number", "phone_number_verified", "address", "updated_at"}},
		{"aggregated and distributed claims", []string{"_claim_names", "_claim_sources"}},
		{"sessions, RFC 8693, RFC 7800, RFC 9068", []string{"sid", "act", "may_act", "cnf", "scope", "client_id", "roles", "groups", "entitlements"}},
		{"the overage of roles and groups (docs/rules.md)", []string{"roles_overage", "groups_overage"}},
		{"RFC 8417, RFC 9449", []string{"events", "toe", "txn", "htm", "htu", "ath"}},
		{"JOSE header names", []string{"typ", "cty", "alg", "kid"}},
	}
	var all []string
	for _, group := range documented {
		all = append(all, group.names...)
	}
	if len(all) != 58 {
		t.Fatalf("the documented list has %d names, want 58", len(all))
	}
	got := identity.ReservedClaims()
	if diff := cmp.Diff(sorted(all), sorted(got)); diff != "" {
		t.Errorf("ReservedClaims() (-documented +got):\n%s", diff)
	}
	e := newTestEnv(t, nil)
	for _, group := range documented {
		for _, name := range group.names {
			for _, variant := range []string{name, strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]} {
				if !identity.IsReservedClaim(variant) {
					t.Errorf("%s: IsReservedClaim(%q) = false", group.source, variant)
				}
				_, err := e.ws.SetClaimMapper(e.ctx, "attr", identity.ClaimMapperSpec{ClaimName: variant})
				if identity.ErrorCode(err) != identity.CodeReservedClaim {
					t.Errorf("%s: PutClaimMapper(%q) = %v, want reserved_claim", group.source, variant, err)
				}
			}
		}
	}
	for _, name := range []string{"dept", "tenant", "employee_id", "subject", "emails", "role", "group", "sub_id", "nam"} {
		if identity.IsReservedClaim(name) {
			t.Errorf("IsReservedClaim(%q) = true, want false", name)
		}
		if _, err := e.ws.SetClaimMapper(e.ctx, "attr-"+name, identity.ClaimMapperSpec{ClaimName: name}); err != nil {
			t.Errorf("PutClaimMapper(%q): %v", name, err)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestRefusedAddressCatalogue: IsPublicAddress follows the IANA IPv4 and
// IPv6 special-purpose address registries, range by range, probed inside
// (at its first and last address where that tells something) and just
// outside: a range whose "Globally Reachable" is false or N/A is refused,
// a globally reachable one inside it (192.0.0.9, ORCHIDv2) is public; so
// are the classic ranges the registries leave out (multicast, site-local,
// IPv4-compatible, IPv6 outside 2000::/3). An address carrying an IPv4
// address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4) is judged by it, and
// every IPv4 probe is tried in those three forms too. CreateWebhook
// refuses an IP literal exactly when IsPublicAddress does.
func TestRefusedAddressCatalogue(t *testing.T) {
	tests := []struct {
		rng     string
		refused []string
		public  []string
	}{
		// IPv4 Special-Purpose Address Registry.
		{`0.0.0.0/8 "This network"`, []string{"0.0.0.1", "0.255.255.255"}, []string{"1.0.0.0"}},
		{`0.0.0.0/32 "This host on this network"`, []string{"0.0.0.0"}, nil},
		{"10.0.0.0/8 Private-Use", []string{"10.0.0.0", "10.0.0.1", "10.255.255.255"}, []string{"9.255.255.255", "11.0.0.0"}},
		{"100.64.0.0/10 Shared Address Space", []string{"100.64.0.0", "100.127.255.255"}, []string{"100.63.255.255", "100.128.0.0"}},
		{"127.0.0.0/8 Loopback", []string{"127.0.0.0", "127.0.0.1", "127.255.255.255"}, []string{"126.255.255.255", "128.0.0.0"}},
		{"169.254.0.0/16 Link Local", []string{"169.254.0.0", "169.254.169.254", "169.254.255.255"}, []string{"169.253.255.255", "169.255.0.0"}},
		{"172.16.0.0/12 Private-Use", []string{"172.16.0.0", "172.31.255.255"}, []string{"172.15.255.255", "172.32.0.0"}},
		{"192.0.0.0/24 IETF Protocol Assignments", []string{"192.0.0.11", "192.0.0.169", "192.0.0.172", "192.0.0.255"}, []string{"191.255.255.255", "192.0.1.0"}},
		{"192.0.0.0/29 IPv4 Service Continuity Prefix", []string{"192.0.0.0", "192.0.0.7"}, nil},
		{"192.0.0.8/32 IPv4 dummy address", []string{"192.0.0.8"}, nil},
		{"192.0.0.9/32 Port Control Protocol Anycast (globally reachable)", nil, []string{"192.0.0.9"}},
		{"192.0.0.10/32 Traversal Using Relays around NAT Anycast (globally reachable)", nil, []string{"192.0.0.10"}},
		{"192.0.0.170/32 and 192.0.0.171/32 NAT64/DNS64 Discovery", []string{"192.0.0.170", "192.0.0.171"}, nil},
		{"192.0.2.0/24 Documentation (TEST-NET-1)", []string{"192.0.2.0", "192.0.2.255"}, []string{"192.0.1.255", "192.0.3.0"}},
		{"192.31.196.0/24 AS112-v4 (globally reachable)", nil, []string{"192.31.196.0", "192.31.196.255"}},
		{"192.52.193.0/24 AMT (globally reachable)", nil, []string{"192.52.193.0", "192.52.193.255"}},
		{"192.88.99.0/24 Deprecated (6to4 Relay Anycast)", []string{"192.88.99.0", "192.88.99.1", "192.88.99.255"}, []string{"192.88.98.255", "192.88.100.0"}},
		{"192.168.0.0/16 Private-Use", []string{"192.168.0.0", "192.168.1.1", "192.168.255.255"}, []string{"192.167.255.255", "192.169.0.0"}},
		{"192.175.48.0/24 Direct Delegation AS112 Service (globally reachable)", nil, []string{"192.175.48.0", "192.175.48.255"}},
		{"198.18.0.0/15 Benchmarking", []string{"198.18.0.0", "198.19.255.255"}, []string{"198.17.255.255", "198.20.0.0"}},
		{"198.51.100.0/24 Documentation (TEST-NET-2)", []string{"198.51.100.0", "198.51.100.255"}, []string{"198.51.99.255", "198.51.101.0"}},
		{"203.0.113.0/24 Documentation (TEST-NET-3)", []string{"203.0.113.0", "203.0.113.255"}, []string{"203.0.112.255", "203.0.114.0"}},
		{"240.0.0.0/4 Reserved", []string{"240.0.0.0", "255.255.255.254"}, nil},
		{"255.255.255.255/32 Limited Broadcast", []string{"255.255.255.255"}, nil},
		// IPv4 multicast.
		{"224.0.0.0/4 Multicast", []string{"224.0.0.0", "224.0.0.251", "239.255.255.255"}, []string{"223.255.255.255"}},

		// IPv6 Special-Purpose Address Registry.
		{"::1/128 Loopback Address", []string{"::1"}, nil},
		{"::/128 Unspecified Address", []string{"::"}, nil},
		{"::ffff:0:0/96 IPv4-mapped Address: its IPv4 address decides", []string{"::ffff:0.0.0.0", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "::ffff:169.254.169.254"},
			[]string{"::ffff:8.8.8.8", "::ffff:93.184.215.14"}},
		{"64:ff9b::/96 IPv4-IPv6 Translat.: its IPv4 address decides", []string{"64:ff9b::", "64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::ffff:ffff"},
			[]string{"64:ff9b::808:808", "64:ff9b::5db8:d70e"}},
		{"64:ff9b::/96 just outside, in 64:ff9b::/64", []string{"64:ff9b::1:808:808", "64:ff9a:ffff:ffff:ffff:ffff:808:808"}, nil},
		{"64:ff9b:1::/48 IPv4-IPv6 Translat. (local use)", []string{"64:ff9b:1::", "64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"100::/64 Discard-Only Address Block", []string{"100::", "100::1", "100::ffff:ffff:ffff:ffff"}, nil},
		{"100:0:0:1::/64 Dummy IPv6 Prefix", []string{"100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff"}, nil},
		{"2001::/23 IETF Protocol Assignments", []string{"2001:1::", "2001:1::4", "2001:1:ffff:ffff:ffff:ffff:ffff:ffff", "2001:2:1::", "2001:4::", "2001:4:113::",
			"2001:40::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"}, []string{"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::"}},
		{"2001::/32 TEREDO (refused whole)", []string{"2001::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"2001:1::1/128 Port Control Protocol Anycast (globally reachable)", nil, []string{"2001:1::1"}},
		{"2001:1::2/128 Traversal Using Relays around NAT Anycast (globally reachable)", nil, []string{"2001:1::2"}},
		{"2001:1::3/128 DNS-SD Service Registration Protocol Anycast (globally reachable)", nil, []string{"2001:1::3"}},
		{"2001:2::/48 Benchmarking", []string{"2001:2::", "2001:2::1", "2001:2:0:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"2001:3::/32 AMT (globally reachable)", nil, []string{"2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{"2001:4:112::/48 AS112-v6 (globally reachable)", []string{"2001:4:111:ffff:ffff:ffff:ffff:ffff"}, []string{"2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff"}},
		{"2001:10::/28 Deprecated (previously ORCHID)", []string{"2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"2001:20::/28 ORCHIDv2 (globally reachable)", nil, []string{"2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{"2001:30::/28 Drone Remote ID Protocol Entity Tags (DETs) Prefix (globally reachable)", nil, []string{"2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{"2001:db8::/32 Documentation", []string{"2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"},
			[]string{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"}},
		{"2002::/16 6to4: its IPv4 address decides", []string{"2002::", "2002:a00:1::1", "2002:7f00:1::1", "2002:c0a8:101::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
			[]string{"2002:808:808::1", "2002:5db8:d70e:ffff:ffff:ffff:ffff:ffff", "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2003::"}},
		{"2620:4f:8000::/48 Direct Delegation AS112 Service (globally reachable)", nil, []string{"2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff"}},
		{"3fff::/20 Documentation", []string{"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"},
			[]string{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::"}},
		{"5f00::/16 Segment Routing (SRv6) SIDs", []string{"5f00::", "5f00::1", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"fc00::/7 Unique-Local", []string{"fc00::", "fd00:ec2::254", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"fe80::/10 Link-Local Unicast", []string{"fe80::", "fe80::1", "fe80::1%eth0", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		// IPv6 ranges outside the special-purpose registry.
		{"::/96 IPv4-compatible (deprecated): refused whatever it carries", []string{"::2", "::7f00:1", "::a00:1", "::808:808", "::ffff:ffff"}, nil},
		{"fec0::/10 site-local (deprecated)", []string{"fec0::", "fec0::1", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"ff00::/8 Multicast", []string{"ff00::", "ff02::1", "ff0e::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
		{"IPv6 outside 2000::/3, the global unicast space", []string{"::1:0:0:0", "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::", "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f01::", "e000::"},
			[]string{"2000::", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{"public", nil, []string{"8.8.8.8", "93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::1"}},
	}
	e := newTestEnv(t, nil)
	// Every public probe creates an endpoint: room for all of them.
	e.setLimits(identity.Limits{WebhookEndpoints: identity.MaxWebhookEndpoints})
	check := func(rng, text string, want bool) {
		t.Helper()
		addr := netip.MustParseAddr(text)
		probes := []netip.Addr{addr}
		if addr.Is4() {
			b := addr.As4()
			probes = append(probes,
				netip.AddrFrom16(addr.As16()), // ::ffff:a.b.c.d
				netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 12: b[0], b[1], b[2], b[3]}), // 64:ff9b::a.b.c.d
				netip.AddrFrom16([16]byte{0x20, 0x02, b[0], b[1], b[2], b[3], 15: 1}),       // 2002:aabb:ccdd::1
			)
		}
		for _, a := range probes {
			if got := identity.IsPublicAddress(a); got != want {
				t.Errorf("%s: IsPublicAddress(%s) = %v, want %v", rng, a, got, want)
			}
		}
		if addr.Zone() != "" {
			return // a URL would need the zone escaped
		}
		host := addr.String()
		if addr.Is6() {
			host = "[" + host + "]"
		}
		_, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://" + host + "/hook", Events: []string{"user.created"}})
		if public := err == nil; public != want {
			t.Errorf("%s: CreateWebhook(https://%s/hook) = %v, want accepted %v", rng, host, err, want)
		}
	}
	for _, tt := range tests {
		for _, a := range tt.refused {
			check(tt.rng, a, false)
		}
		for _, a := range tt.public {
			check(tt.rng, a, true)
		}
	}
	if identity.IsPublicAddress(netip.Addr{}) {
		t.Error("IsPublicAddress(the zero Addr) = true")
	}
}

// TestCataloguesOfNames: the documented event types, scopes, error codes
// and field rules, and the documented defaults, written out.
func TestCataloguesOfNames(t *testing.T) {
	events := []identity.EventType{"user.created", "user.updated", "user.disabled", "user.enabled", "user.password.changed",
		"user.role.assigned", "user.role.removed", "login.failed", "session.revoked", "login.succeeded", "token.refresh_reused",
		"user.locked", "user.unlocked", "user.mfa.enrolled", "user.mfa.removed", "user.mfa.reset",
		"user.passkey.added", "user.passkey.removed", "user.deleted",
		"role.created", "role.updated", "role.deleted", "group.created", "group.updated", "group.deleted",
		"group.member.added", "group.member.removed", "group.role.assigned", "group.role.removed",
		"user.attributes.changed"}
	if diff := cmp.Diff(events, identity.EventTypes()); diff != "" {
		t.Errorf("EventTypes (-documented +got):\n%s", diff)
	}
	for _, ev := range events {
		if !ev.Known() {
			t.Errorf("%q.Known() = false", ev)
		}
	}
	if identity.EventType("email.verification").Known() || identity.EmailVerificationJob != "email.verification" {
		t.Errorf("the email job type %q must be no event", identity.EmailVerificationJob)
	}
	scopes := []identity.Scope{"users:read", "users:write", "user_attributes:read", "user_attributes:write",
		"claim_mappers:read", "claim_mappers:write", "webhooks:read", "webhooks:write",
		"roles:read", "roles:write", "groups:read", "groups:write",
		"clients:read", "clients:write", "branding:read", "branding:write", "audit:read"}
	if diff := cmp.Diff(scopes, identity.Scopes()); diff != "" {
		t.Errorf("Scopes (-documented +got):\n%s", diff)
	}
	codes := map[identity.Code]error{
		"invalid": identity.ErrInvalid, "not_found": identity.ErrNotFound, "conflict": identity.ErrConflict,
		"reserved_claim": identity.ErrReservedClaim, "limit_reached": identity.ErrLimitReached,
		"unauthenticated": identity.ErrUnauthenticated, "forbidden": identity.ErrForbidden, "internal": identity.ErrInternal,
		"token_invalid": identity.ErrTokenInvalid, "token_expired": identity.ErrTokenExpired, "token_used": identity.ErrTokenUsed,
		"precondition_failed": identity.ErrPreconditionFailed, "idempotency_key_reused": identity.ErrIdempotencyKeyReused,
		"idempotency_key_in_use": identity.ErrIdempotencyKeyInUse,
		"invalid_grant":          identity.ErrInvalidGrant, "login_required": identity.ErrLoginRequired,
		"locked": identity.ErrLocked, "mfa_required": identity.ErrMFARequired,
		"mfa_enrollment_required": identity.ErrMFAEnrollmentRequired,
		"rate_limited":            identity.ErrRateLimited, "email_unverified": identity.ErrEmailUnverified,
		"confirmation_required":       identity.ErrConfirmationRequired,
		"passkey_enrollment_required": identity.ErrPasskeyEnrollmentRequired,
	}
	if len(codes) != 23 {
		t.Fatalf("%d documented codes, want 23", len(codes))
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(codes)), declaredCodes(t)); diff != "" {
		t.Errorf("codes with a sentinel (-want +declared):\n%s", diff)
	}
	for code, sentinel := range codes {
		if got := identity.ErrorCode(sentinel); got != code {
			t.Errorf("the sentinel of %q has code %q", code, got)
		}
	}
	rules := []string{identity.RuleRequired, identity.RuleMinLength, identity.RuleMaxLength, identity.RulePattern,
		identity.RuleFormat, identity.RuleUTF8, identity.RuleControlCharacter, identity.RuleRange, identity.RuleUnknown,
		identity.RuleDuplicate, identity.RuleTaken, identity.RulePrivateAddress, identity.RuleLoopbackOnly,
		identity.RuleNotAllowed, identity.RulePasswordMinLength, identity.RulePasswordMaxLength, identity.RulePasswordUpper,
		identity.RulePasswordLower, identity.RulePasswordDigit, identity.RulePasswordSymbol, identity.RulePasswordIdentity}
	documentedRules := []string{"required", "min_length", "max_length", "pattern", "format", "utf8", "control_character",
		"range", "unknown", "duplicate", "taken", "private_address", "loopback_only", "not_allowed", "password_min_length",
		"password_max_length", "password_uppercase", "password_lowercase", "password_digit", "password_symbol",
		"password_matches_identity"}
	if diff := cmp.Diff(documentedRules, rules); diff != "" {
		t.Errorf("field rules (-documented +got):\n%s", diff)
	}
	defaults := []struct {
		name      string
		want, got time.Duration
	}{
		{"DefaultSessionLifetime", 24 * time.Hour, identity.DefaultSessionLifetime},
		{"DefaultIdempotencyLifetime", 24 * time.Hour, identity.DefaultIdempotencyLifetime},
		{"DefaultVerificationTokenLifetime", 24 * time.Hour, identity.DefaultVerificationTokenLifetime},
		{"MinVerificationTokenLifetime", 5 * time.Minute, identity.MinVerificationTokenLifetime},
		{"MaxVerificationTokenLifetime", 7 * 24 * time.Hour, identity.MaxVerificationTokenLifetime},
		{"DefaultDisableAfter", 5 * 24 * time.Hour, identity.DefaultDisableAfter},
		{"DefaultSweepInterval", 10 * time.Minute, identity.DefaultSweepInterval},
	}
	for _, d := range defaults {
		if d.got != d.want {
			t.Errorf("%s = %v, documented %v", d.name, d.got, d.want)
		}
	}
}

// TestTokenShapes: keys, session and verification tokens, webhook
// secrets, OAuth client ids and secrets and event ids have their
// documented shapes.
func TestTokenShapes(t *testing.T) {
	e := newTestEnv(t, nil)
	createdKey, err := e.ws.CreateAPIKey(e.ctx, "ci", []identity.Scope{"users:read"})
	if err != nil {
		t.Fatal(err)
	}
	k, key := createdKey.APIKey, createdKey.Secret
	createdSession, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	session := createdSession.Secret
	created, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/x", Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	e.user("bob")
	ds, err := listItems(e.ws.ListDeliveries(e.ctx, created.Endpoint.ID, nil))
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %v, %v", ds, err)
	}
	client, err := e.ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	shapes := []struct {
		what, value, pattern string
	}{
		{"OAuth client id", client.Client.ID, `^idc_[0-9a-f]{16}$`},
		{"OAuth client secret", client.Secret, `^idcs_[A-Za-z0-9_-]{43}$`},
		{"API key", key, `^idk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`},
		{"session token", session, `^ids_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`},
		{"webhook secret", created.Secret, `^whsec_[A-Za-z0-9+/]{43}=$`},
		{"event id", ds[0].EventID, `^msg_[A-Za-z0-9_-]{22}$`},
	}
	for _, s := range shapes {
		if !regexp.MustCompile(s.pattern).MatchString(s.value) {
			t.Errorf("%s %q does not match %s", s.what, s.value, s.pattern)
		}
	}
	id, ok := identity.APIKeyID(key)
	if !ok || id != k.ID || !strings.HasPrefix(key, "idk_"+id+"_") {
		t.Errorf("APIKeyID(%q) = %q, %v; want %q", key, id, ok, k.ID)
	}
	for _, bad := range []string{"", session, "idk_g" + k.ID[1:] + key[20:], "idk_" + k.ID + "-" + key[21:], key + "A", key[:len(key)-1]} {
		if _, ok := identity.APIKeyID(bad); ok {
			t.Errorf("APIKeyID(%q) = ok", bad)
		}
	}
	if !k.HasScope("users:read") || k.HasScope("users:write") {
		t.Errorf("HasScope of a users:read key: %v, %v", k.HasScope("users:read"), k.HasScope("users:write"))
	}
}

// TestTimesAreUTCMicroseconds: the library keeps times in UTC to the
// microsecond, whatever the clock's zone and precision.
func TestTimesAreUTCMicroseconds(t *testing.T) {
	e := newTestEnv(t, nil)
	e.clock.Set(time.Date(2026, 3, 14, 16, 9, 26, 535897932, time.FixedZone("CET", 3600)))
	u := e.user("bob")
	want := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	if diff := cmp.Diff([]time.Time{want, want}, []time.Time{u.CreatedAt, u.UpdatedAt}); diff != "" {
		t.Errorf("CreatedAt, UpdatedAt (-want +got):\n%s", diff)
	}
	if u.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt in %v, want UTC", u.CreatedAt.Location())
	}
}

// declaredCodes returns the values of the constants of type Code that
// errors.go declares, sorted: what a new code must come with a sentinel
// for.
func declaredCodes(t *testing.T) []identity.Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []identity.Code
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := spec.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return false
		}
		for _, v := range spec.Values {
			if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, identity.Code(s))
			}
		}
		return false
	})
	slices.Sort(codes)
	return codes
}
