package console_test

import "net/url"

// usersCSRFRows are the rows of csrfRows for the users pages' POST
// routes.
var usersCSRFRows = map[string]struct {
	path string
	form url.Values
}{
	"workspaces/{slug}/users/bulk":                           {"workspaces/acme/users/bulk", url.Values{"scope": {"search"}, "action": {"disable"}, "confirm": {"yes"}}},
	"workspaces/{slug}/users/{id}":                           {"workspaces/acme/users/1", url.Values{"email": {"forged@example.com"}, "fullName": {"Forged"}}},
	"workspaces/{slug}/users/{id}/enable":                    {"workspaces/acme/users/1/enable", nil},
	"workspaces/{slug}/users/{id}/disable":                   {"workspaces/acme/users/1/disable", nil},
	"workspaces/{slug}/users/{id}/email-verified":            {"workspaces/acme/users/1/email-verified", url.Values{"verified": {"true"}}},
	"workspaces/{slug}/users/{id}/password-reset":            {"workspaces/acme/users/1/password-reset", nil},
	"workspaces/{slug}/users/{id}/attributes":                {"workspaces/acme/users/1/attributes", url.Values{"key": {"forged"}, "value": {"x"}}},
	"workspaces/{slug}/users/{id}/attributes/delete":         {"workspaces/acme/users/1/attributes/delete", url.Values{"key": {"team"}}},
	"workspaces/{slug}/users/{id}/roles":                     {"workspaces/acme/users/1/roles", url.Values{"role": {"billing"}}},
	"workspaces/{slug}/users/{id}/roles/{role}/remove":       {"workspaces/acme/users/1/roles/1/remove", nil},
	"workspaces/{slug}/users/{id}/groups":                    {"workspaces/acme/users/1/groups", url.Values{"group": {"1"}}},
	"workspaces/{slug}/users/{id}/groups/{group}/remove":     {"workspaces/acme/users/1/groups/1/remove", nil},
	"workspaces/{slug}/users/{id}/sessions/revoke":           {"workspaces/acme/users/1/sessions/revoke", nil},
	"workspaces/{slug}/users/{id}/sessions/{session}/revoke": {"workspaces/acme/users/1/sessions/x/revoke", nil},
	"workspaces/{slug}/users/{id}/passkeys/{passkey}/delete": {"workspaces/acme/users/1/passkeys/AQID/delete", nil},
	"workspaces/{slug}/users/{id}/mfa/reset":                 {"workspaces/acme/users/1/mfa/reset", nil},
	"workspaces/{slug}/users/{id}/unlock":                    {"workspaces/acme/users/1/unlock", nil},
	"workspaces/{slug}/users/{id}/delete":                    {"workspaces/acme/users/1/delete", url.Values{"confirm": {"ada"}}},
}
