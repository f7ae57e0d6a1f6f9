package identity

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// The audit trail: one record for every committed change and every
// authentication outcome, written in the transaction of the change (as
// the outbox is), so that a change without its record, or a record
// without its change, cannot be. docs/audit.md is the catalogue.

// ActorKind is the kind of whoever made a call: the actor of an audit
// record.
type ActorKind string

// The kinds of actor.
const (
	// ActorAPIKey: a call of the REST API, made with an API key. ID is
	// the key's id, Display its name.
	ActorAPIKey ActorKind = "api_key"
	// ActorOperator: an administrator of the server, such as a command of
	// identityd through the admin socket (ID is the operator's numeric
	// user id on the host, Display their user name) or an operator of
	// package console (ID is their user id in the operator workspace,
	// Display their username there).
	ActorOperator ActorKind = "operator"
	// ActorUser: a user of the workspace, on the hosted pages or in their
	// own sign-in. ID is the user's id, Display their username.
	ActorUser ActorKind = "user"
	// ActorClient: an OAuth client, on the protocol endpoints. ID is the
	// client's id, Display its name.
	ActorClient ActorKind = "client"
	// ActorSystem: the program itself (a call whose context names no
	// actor) or the library's own work: sweeps, lock expiry, scheduled
	// key rotation.
	ActorSystem ActorKind = "system"
)

// ActorKinds returns the kinds of actor in a stable order.
func ActorKinds() []ActorKind {
	return []ActorKind{ActorAPIKey, ActorOperator, ActorUser, ActorClient, ActorSystem}
}

// Actor is who made a call, as the audit trail records it. An adapter
// puts it in the context of the calls a request makes (WithActor).
type Actor struct {
	Kind    ActorKind `json:"kind"`
	ID      string    `json:"id,omitempty"`
	Display string    `json:"display,omitempty"`
}

type actorKey struct{}

// WithActor returns a context naming a as the actor of the calls made
// with it.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx names, or the system's actor
// ({Kind: ActorSystem}) when it names none.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok && a.Kind != "" {
		return a
	}
	return Actor{Kind: ActorSystem}
}

// AuditTarget is what an audit record is about: a user, a role, a
// client... Kind is one of the Target constants, ID the record's id in
// decimal or as it is, Display its name when the record was written.
// Whatever belongs to one user (a session, a second factor, a password,
// an attribute, a role assignment, a membership, tokens issued to them)
// is recorded with the user as the target, so that the user's trail is
// one query and the user's erasure finds every record that names them.
type AuditTarget struct {
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`
	Display string `json:"display,omitempty"`
}

// The kinds of audit target.
const (
	TargetWorkspace  = "workspace"
	TargetUser       = "user"
	TargetRole       = "role"
	TargetGroup      = "group"
	TargetMapper     = "mapper"
	TargetWebhook    = "webhook"
	TargetDelivery   = "delivery"
	TargetAPIKey     = "api_key"
	TargetClient     = "client"
	TargetSigningKey = "signing_key"
)

// AuditOutcome is whether the action of an audit record succeeded.
type AuditOutcome string

// The outcomes.
const (
	OutcomeSuccess AuditOutcome = "success"
	OutcomeFailure AuditOutcome = "failure"
)

// AuditRequest is the request an audited call was made for, from the
// RequestInfo of its context: empty for a call of the program itself.
type AuditRequest struct {
	Address   string `json:"address,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	RequestID string `json:"requestId,omitempty"`
}

// AuditChange is a field's value before and after the change (nil when
// it had none or has none). A secret's values are never kept: see
// Redacted.
type AuditChange struct {
	Before any `json:"before,omitempty"`
	After  any `json:"after,omitempty"`
}

// Redacted stands in an audit record for the value of a secret (see
// docs/audit.md): the record says the field changed, never to what.
const Redacted = "[redacted]"

// AuditRecord is one record of a workspace's audit trail.
type AuditRecord struct {
	// ID is unique and time-ordered: 32 lowercase hex digits, the first
	// 16 the microseconds since 1970 of Time.
	ID        string       `json:"id"`
	Time      time.Time    `json:"time"`
	Workspace string       `json:"workspace"`
	Actor     Actor        `json:"actor"`
	Action    AuditAction  `json:"action"`
	Target    AuditTarget  `json:"target"`
	Outcome   AuditOutcome `json:"outcome"`
	// Reason says why, where an action has reasons (a failed sign-in's:
	// the reasons of login.failed; a revoked session's).
	Reason  string                 `json:"reason,omitempty"`
	Request AuditRequest           `json:"request"`
	Changes map[string]AuditChange `json:"changes,omitempty"`
}

// AuditSink is told of every audit record once its transaction has
// committed, never before (Options.AuditSink): to stream the trail to a
// SIEM. Audit is called on the goroutine that committed, so it must
// return at once and never call the Service; a sink that cannot keep up
// drops lines rather than wait (identityd serve -audit-log does, and
// says how many).
type AuditSink interface {
	Audit(rec AuditRecord)
}

// auditEntry is what a write method says of its change; audit fills in
// the rest.
type auditEntry struct {
	action  AuditAction
	target  AuditTarget
	failure bool
	reason  string
	changes auditChanges
	// actor, when set, is the actor instead of the context's: a user
	// who has just proved who they are.
	actor *Actor
}

// auditChanges are the fields an audited change changed. Every value
// goes through set, which redacts secrets: the one place the rule is
// applied.
type auditChanges map[string]AuditChange

// set records field as changed from before to after (redacted when the
// field holds a secret) and returns c, made when nil.
func (c auditChanges) set(field string, before, after any) auditChanges {
	if c == nil {
		c = auditChanges{}
	}
	c[field] = AuditChange{Before: redact(field, before), After: redact(field, after)}
	return c
}

// setIfChanged records field only when before and after differ.
func (c auditChanges) setIfChanged(field string, before, after any) auditChanges {
	if before == after {
		return c
	}
	return c.set(field, before, after)
}

// userTarget is the target of an action on the user.
func userTarget(u store.User) AuditTarget {
	return AuditTarget{Kind: TargetUser, ID: strconv.FormatInt(u.ID, 10), Display: u.Username}
}

// UserActor returns the user u as the actor of calls made on their
// behalf, as the audit trail names a user: kind user, the user's id, and
// the username to show. The library records a user's own sign-in with
// it; an adapter passes it to WithActor for the calls of a signed-in
// user's request.
func UserActor(u User) Actor { return userActorOf(u.ID, u.Username) }

// userActor is the user as the actor of their own action.
func userActor(u store.User) *Actor {
	a := userActorOf(u.ID, u.Username)
	return &a
}

// userActorOf is the actor of the user with the id and the username.
func userActorOf(id int64, username string) Actor {
	return Actor{Kind: ActorUser, ID: strconv.FormatInt(id, 10), Display: username}
}

// audit writes the record of e in tx, the transaction of the change, and
// keeps it for the Service's sink and observer until tx commits.
func (w *Workspace) audit(ctx context.Context, tx store.Tx, e auditEntry) error {
	rec, err := w.svc.auditRecord(ctx, w.slug, e)
	if err != nil {
		return err
	}
	stored, err := rec.stored()
	if err != nil {
		return err
	}
	if err := tx.PutAuditRecord(w.slug, stored); err != nil {
		return err
	}
	addNote(tx, note{audit: &rec})
	return nil
}

// auditAlone writes the record of e in a transaction of its own: for
// an outcome no stored change goes with (a refused sign-in, an export).
// A record alone queues no job, so the queue's watchers are not woken
// (w.update would): a flood of refusals costs their writes and nothing
// else.
func (w *Workspace) auditAlone(ctx context.Context, e auditEntry) error {
	return fromStore(w.svc.store.Update(ctx, func(tx store.Tx) error { return w.audit(ctx, tx, e) }), "workspace")
}

// auditRecord builds the record of e in the workspace slug, at the
// Service's time.
func (s *Service) auditRecord(ctx context.Context, slug string, e auditEntry) (AuditRecord, error) {
	now := s.timestamp()
	id, err := newAuditID(now)
	if err != nil {
		return AuditRecord{}, err
	}
	actor := ActorFrom(ctx)
	if e.actor != nil {
		actor = *e.actor
	}
	info := RequestInfoFrom(ctx)
	rec := AuditRecord{
		ID: id, Time: now, Workspace: slug, Actor: actor, Action: e.action, Target: e.target,
		Outcome: OutcomeSuccess, Reason: e.reason, Changes: e.changes,
		Request: AuditRequest{UserAgent: boundedUserAgent(info.UserAgent), RequestID: info.RequestID},
	}
	if info.Address.IsValid() {
		rec.Request.Address = info.Address.String()
	}
	if e.failure {
		rec.Outcome = OutcomeFailure
	}
	return rec, nil
}

// stored is the record as a store keeps it.
func (r AuditRecord) stored() (store.AuditRecord, error) {
	var changes []byte
	if len(r.Changes) > 0 {
		var err error
		if changes, err = json.Marshal(r.Changes); err != nil {
			return store.AuditRecord{}, fmt.Errorf("encode audit changes: %w", err)
		}
	}
	return store.AuditRecord{
		ID: r.ID, Time: r.Time, ActorKind: string(r.Actor.Kind), ActorID: r.Actor.ID, ActorDisplay: r.Actor.Display,
		Action: string(r.Action), TargetKind: r.Target.Kind, TargetID: r.Target.ID, TargetDisplay: r.Target.Display,
		Outcome: string(r.Outcome), Reason: r.Reason, Address: r.Request.Address, UserAgent: r.Request.UserAgent,
		RequestID: r.Request.RequestID, Changes: changes,
	}, nil
}

// auditFromRecord reads a stored record of the workspace slug.
func auditFromRecord(slug string, s store.AuditRecord) (AuditRecord, error) {
	r := AuditRecord{
		ID: s.ID, Time: s.Time, Workspace: slug,
		Actor:   Actor{Kind: ActorKind(s.ActorKind), ID: s.ActorID, Display: s.ActorDisplay},
		Action:  AuditAction(s.Action),
		Target:  AuditTarget{Kind: s.TargetKind, ID: s.TargetID, Display: s.TargetDisplay},
		Outcome: AuditOutcome(s.Outcome), Reason: s.Reason,
		Request: AuditRequest{Address: s.Address, UserAgent: s.UserAgent, RequestID: s.RequestID},
	}
	if len(s.Changes) > 0 {
		if err := json.Unmarshal(s.Changes, &r.Changes); err != nil {
			return AuditRecord{}, fmt.Errorf("decode audit record %s: %w", s.ID, err)
		}
	}
	return r, nil
}

// auditIDLen is the length of an audit record's id.
const auditIDLen = 32

// newAuditID returns a time-ordered id for a record written at t: 16 hex
// digits of t's microseconds since 1970, then 16 of random bits, so that
// records of one microsecond are unique too.
func newAuditID(t time.Time) (string, error) {
	// The time's 8 bytes, big-endian, then the random 8, in hex: one
	// allocation, the string.
	var b [auditIDLen / 2]byte
	binary.BigEndian.PutUint64(b[:8], uint64(max(t.UnixMicro(), 0)))
	if _, err := rand.Read(b[8:]); err != nil {
		return "", err
	}
	var id [auditIDLen]byte
	hex.Encode(id[:], b[:])
	return string(id[:]), nil
}

// auditIDPrefix is the time half of the ids of records written at t;
// times before 1970 count as 1970.
func auditIDPrefix(t time.Time) string {
	return fmt.Sprintf("%016x", max(t.UnixMicro(), 0))
}

// redact returns v, or Redacted when field names a secret and v is set:
// the one rule that keeps secrets out of the trail. A field names a
// secret when its last dot-separated part, in any case, contains
// "password", "secret", "token", "hash", "recoverycode" or
// "privatekey", or is "code" or "otp", and does not end in "policy": a
// policy is a rule about secrets (the settings' passwordPolicy), not
// one.
func redact(field string, v any) any {
	if v == nil || !secretField(field) {
		return v
	}
	return Redacted
}

// secretField reports whether field names a secret (see redact).
func secretField(field string) bool {
	name := strings.ToLower(field[strings.LastIndexByte(field, '.')+1:])
	switch {
	case name == "code" || name == "otp":
		return true
	case strings.HasSuffix(name, "policy"):
		return false
	}
	for _, s := range []string{"password", "secret", "token", "hash", "recoverycode", "privatekey"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}
