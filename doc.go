// Package identity is an embedded library for multi-workspace identity
// management: users with argon2id-hashed passwords, per-user attributes,
// claim mappers that project attributes into token claims, webhook endpoint
// subscriptions, scoped API keys, OAuth clients (see CreateClient), the
// rules of an OpenID Provider per workspace (signing keys, IssueTokens,
// VerifyAccessToken, Authorize, SignIn, ExchangeCode, RefreshTokens; the
// HTTP side is package oidc), and verification email through a
// workspace's SMTP server (see ConfirmEmail).
//
// A Service holds many workspaces over one store.Store. Open gives the
// one-call default, a bbolt file. New takes any Store: store/pgstore for a
// PostgreSQL database that several processes share, store/memstore for
// tests, or another implementation that passes the store/storetest
// conformance suite and the identitytest rules suite. A Workspace handle
// carries every operation on one workspace:
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
//
// # Where things live
//
//	identity          the domain: Service, Workspace, every rule, the outbox, and the
//	                  queue's rules (Queue: lease, record a result, retry schedule,
//	                  Retry-After, disabling endpoints, what a verification email holds),
//	                  tokens' rules (keys and their rotation, which claims, lifetimes,
//	                  codes, refresh rotation and reuse, revocation)
//	store             the Store and Tx contract and its records; the transaction front
//	                  (RunView, RunUpdate) that enforces the lifecycle for every store
//	  storetest       the store contract suite (Run) and benchmarks (RunBenchmarks)
//	  boltstore       bbolt, the default; memstore for tests; pgstore for PostgreSQL
//	identitytest      the domain rules suite, run over any Store (RunRules)
//	delivery          the Dispatcher: loop, workers, per-endpoint caps, leases, Stats
//	webhook           Standard Webhooks over HTTP: signing, the SSRF-guarded client
//	smtpmail          SMTP submission and the verification email's MIME message
//	jws               the TokenSigner over go-jose (this package imports no JOSE library)
//	oidc              the OpenID Provider and its hosted sign-in page, over this package
//	httpapi           the REST adapter
//	examples          quickstart, embed, identityd (the server and admin CLI)
//
// # Why it is shaped this way
//
// The rules live here alone. A Store persists and guarantees atomicity; it
// never decides whether a username is taken or a mapper is one too many,
// so every store enforces the same rules, and a rule that reads before it
// writes holds under concurrency because it runs in one serializable
// transaction. Adapters talk in this package's types and decide nothing.
//
// Dependencies point one way: delivery, webhook, smtpmail, jws, oidc and httpapi
// import identity, never the reverse. Where this package needs something
// done by an adapter, it declares the small interface and the adapter
// implements it: QueueWatcher lets the dispatcher be woken after a commit
// that queued a job and be told of a deleted endpoint, and TokenSigner
// lets package jws sign and verify tokens. So this package imports no
// HTTP, TLS, SMTP, MIME, JOSE or PostgreSQL code, and a program that
// embeds it links only what it uses.
//
// The queue is an outbox: a change and the jobs it causes (webhook
// deliveries, verification emails) commit in one transaction. The
// dispatcher works the queue through Queue's four steps (Due, Lease,
// Begin, Record), each one transaction here, so what a lease means and
// what a result leads to is decided in one place for every store and
// every dispatcher, in one process or many.
package identity
