package identity

import (
	"context"

	"github.com/identitylib/identity/store"
)

// ExchangeClientCredentials issues a confidential client an access token
// for itself (the client_credentials grant): no user, no user claims, no
// ID or refresh token, sub is the client's id. The client must have the
// grant (CodeForbidden). Scopes name user data, so none is granted:
// scopes is accepted for the protocol's sake and ignored.
func (p *Provider) ExchangeClientCredentials(ctx context.Context, client OAuthClient, scopes []string) (Tokens, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return Tokens{}, err
	}
	if client.Public || !client.HasGrantType(GrantClientCredentials) {
		return Tokens{}, errorf(CodeForbidden, "the client may not use the client_credentials grant")
	}
	key, err := w.activeKey(ctx)
	if err != nil {
		return Tokens{}, err
	}
	var is issuance
	err = w.update(ctx, func(tx store.Tx) (err error) {
		if _, err := tx.OAuthClient(w.slug, client.ID); err != nil {
			return err
		}
		is, err = w.newGrant(ctx, tx, client, store.Grant{ClientID: client.ID, Scopes: []string{}}, w.svc.timestamp())
		return err
	})
	if err != nil {
		return Tokens{}, fromStore(err, "client")
	}
	return w.sign(key, is)
}
