package oidc

import (
	"context"
	"net/http"

	"github.com/identitylib/identity"
)

// The actor of the library calls a request makes (identity.WithActor),
// which the audit trail records: whoever the endpoint knows the request
// comes from.
//
//   - The sign-in page and the authorization endpoint, before a user is
//     known: the client the authorization request is for. The library
//     names the user itself as the actor of the sign-in that succeeds.
//   - The pages once they know the signed-in user: the account page with
//     a valid session, the second factor's step after the password, the
//     logout confirmation and the logout of a browser with a session:
//     the user.
//   - The token, revocation and introspection endpoints, once the client
//     authenticated, and a logout without a session whose request names
//     its client: the client.
//
// A request that names none of them (the account page's own sign-in,
// a password reset, an email's link, a client whose credentials were
// refused) makes its calls without an actor, which the library records
// as the system's.

// asUser returns r whose calls have the user u as their actor.
func asUser(r *http.Request, u identity.User) *http.Request {
	return r.WithContext(identity.WithActor(r.Context(), identity.UserActor(u)))
}

// asClient returns r whose calls have the client (its id and name) as
// their actor.
func asClient(r *http.Request, id, name string) *http.Request {
	return r.WithContext(withClient(r.Context(), id, name))
}

// withClient returns ctx whose calls have the client (its id and name)
// as their actor.
func withClient(ctx context.Context, id, name string) context.Context {
	return identity.WithActor(ctx, identity.Actor{Kind: identity.ActorClient, ID: id, Display: name})
}
