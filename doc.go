// Package identity is an embedded library for multi-workspace identity
// management: users with argon2id-hashed passwords, per-user attributes,
// claim mappers that project attributes into token claims, webhook endpoint
// subscriptions, scoped API keys, and verification email through a
// workspace's SMTP server (see ConfirmEmail).
//
// A Service holds many workspaces over one store.Store. Open gives the
// one-call default: a bbolt file, or with a postgres:// URL a PostgreSQL
// database that several processes share (store/pgstore). New takes any
// Store (store/memstore for tests, store/boltstore, store/pgstore, or
// another implementation that passes the store/storetest conformance
// suite). A Workspace handle carries every operation on one workspace:
//
//	svc, err := identity.Open("identity.db", nil)
//	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
//	u, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
//		FullName: "Ada Lovelace", Password: "correct horse battery"})
//	err = ws.SetAttribute(ctx, u.ID, "department", "engineering")
//	_, err = ws.PutClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"})
//	claims, err := ws.Claims(ctx, u.ID, identity.AccessToken) // {"dept": "engineering"}
//
// Every rule lives in this package: validation (lengths count Unicode code
// points), uniqueness, limits, defaults and errors. Each operation is one
// store transaction, so nothing partial is ever written and every rule
// holds under concurrent callers. Errors are *Error values with a Code;
// test them with errors.Is against the sentinels (ErrNotFound, ErrConflict,
// ErrInvalid, ...) or read ErrorCode.
//
// Users, claim mappers and webhook endpoints carry a Version that changes on
// every write; a Precondition (IfVersion) makes an update conditional on
// it, so a writer never overwrites a change it has not seen. An
// Idempotency key makes CreateUser and CreateWebhook safe to retry: the
// outcome is stored with the key in the creating transaction and returned
// to every retry.
package identity
