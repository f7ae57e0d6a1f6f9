package identity

import (
	"context"
	"slices"
	"strings"

	"github.com/identitylib/identity/store"
)

// ClaimSourceKind is what kind of rule puts a claim in a token.
type ClaimSourceKind string

// The kinds of claim source.
const (
	// ClaimFromProtocol: a claim of the token itself (iss, sub, aud, exp,
	// iat, jti, client_id, scope, auth_time, sid, azp, nonce, amr,
	// at_hash); Detail says what it holds.
	ClaimFromProtocol ClaimSourceKind = "protocol"
	// ClaimFromScope: a claim a scope asks for; Detail is the scope
	// (profile, email, groups, roles).
	ClaimFromScope ClaimSourceKind = "scope"
	// ClaimFromClient: an access claim (groups, roles) the client
	// receives whatever scopes it asks for (NewClient.Claims); Detail is
	// the claim.
	ClaimFromClient ClaimSourceKind = "client"
	// ClaimFromMapper: a claim mapper's; Detail is the mapper's attribute
	// key.
	ClaimFromMapper ClaimSourceKind = "mapper"
)

// ClaimSource says which rule put a claim in a token.
type ClaimSource struct {
	Kind   ClaimSourceKind `json:"kind"`
	Detail string          `json:"detail"`
}

func fromProtocol(detail string) ClaimSource {
	return ClaimSource{Kind: ClaimFromProtocol, Detail: detail}
}

// ClaimsPreviewRequest asks GetClaimsPreview for the claims of a user's
// tokens.
type ClaimsPreviewRequest struct {
	// UserID is the user; the user must be enabled, as for IssueTokens.
	UserID int64
	// ClientID, when set, is the client the tokens would be for: its
	// Claims (groups, roles) count, and it is their audience. Empty
	// previews the tokens of no client in particular: without aud, azp
	// and client_id, and without the access claims a client adds.
	ClientID string
	// Scopes are the scopes asked for, as TokenRequest takes them
	// (scopes the provider does not know are dropped); nil means openid,
	// profile and email, what a sign-in usually asks. An ID token is
	// previewed when they hold openid.
	Scopes []string
}

// ClaimsPreview is the answer of GetClaimsPreview.
type ClaimsPreview struct {
	// Scopes are the scopes the tokens would be granted.
	Scopes []string `json:"scopes"`
	// Access and ID are the claims of the access token and of the ID
	// token (empty without the openid scope), in name order, never nil.
	Access []PreviewClaim `json:"access"`
	ID     []PreviewClaim `json:"id"`
}

// PreviewClaim is one claim of a previewed token.
type PreviewClaim struct {
	Name string `json:"name"`
	// Value is the value the token would carry if issued now (times as
	// Unix seconds); nil for jti and at_hash, which only a token being
	// signed has.
	Value any `json:"value"`
	// Source is the rule that puts the claim in the token.
	Source ClaimSource `json:"source"`
}

// defaultPreviewScopes are the scopes GetClaimsPreview previews when the
// request names none.
var defaultPreviewScopes = []string{ScopeOpenID, ScopeProfile, ScopeEmail}

// GetClaimsPreview returns the claims that an access token and an ID
// token issued now for the user (and the client, when named) would
// carry, with the rule that puts each there: a mapper (by its attribute
// key), a scope, the client's access claims, or the protocol. It reads
// and writes nothing else: no grant is made, nothing is signed, and it
// is not audited. The claims come from the very code that builds tokens
// for signing, so a preview and an issued token never differ but for
// jti, at_hash and the times. An unknown user or client is CodeNotFound,
// a disabled user CodeForbidden.
func (w *Workspace) GetClaimsPreview(ctx context.Context, req ClaimsPreviewRequest) (ClaimsPreview, error) {
	scopes := defaultPreviewScopes
	if req.Scopes != nil {
		scopes = req.Scopes
	}
	var p tokenPayloads
	err := w.view(ctx, func(tx store.Tx) error {
		var client OAuthClient
		if req.ClientID != "" {
			rec, err := tx.OAuthClient(w.slug, req.ClientID)
			if err != nil {
				return fromStore(err, "client")
			}
			client = clientFromRecord(rec)
		}
		now := w.svc.timestamp()
		g := w.grantTimes(store.Grant{ClientID: client.ID, UserID: req.UserID, Scopes: knownScopes(scopes)}, now)
		is, err := w.gatherUser(tx, issuance{grant: g, now: now}, client)
		if err != nil {
			return err
		}
		p = w.payloads(is, nil, true)
		return nil
	})
	if err != nil {
		return ClaimsPreview{}, fromStore(err, "user")
	}
	return ClaimsPreview{Scopes: p.scopes, Access: p.access.preview(), ID: p.id.preview()}, nil
}

// preview lists the payload's claims with their sources, in name order;
// never nil.
func (p payload) preview() []PreviewClaim {
	out := make([]PreviewClaim, 0, len(p.claims))
	for name, v := range p.claims {
		out = append(out, PreviewClaim{Name: name, Value: v, Source: p.from[name]})
	}
	slices.SortFunc(out, func(a, b PreviewClaim) int { return strings.Compare(a.Name, b.Name) })
	return out
}
