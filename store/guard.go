package store

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// RunView calls fn with a Tx that forwards every method to tx, a store's
// read-only transaction, and returns fn's result unchanged. Every write
// method returns ErrReadOnly without reaching tx, and once fn has returned
// (or panicked) every method returns ErrTxDone. The Tx implements Bulk
// when tx does, with InsertUsers a write. A store's View calls it once per
// call of fn.
func RunView(tx Tx, fn func(Tx) error) error { return run(tx, false, fn) }

// RunUpdate calls fn with a Tx that forwards every method to tx, a
// store's read-write transaction, and returns fn's result unchanged. Once
// fn has returned (or panicked) every method returns ErrTxDone without
// reaching tx. PutDelivery refuses a job whose Kind is neither JobWebhook
// nor JobMail, a mail job with an EndpointID or a negative UserID, or a
// webhook job with a UserID, so a store sees only well-formed jobs; PutWebhook refuses an id below 1; PutOAuthClient,
// PutSigningKey, PutAuthRequest, PutGrant and PutRefreshToken refuse an
// empty id, and PutRefreshToken an empty GrantID; PutLoginAttempts and
// PutSecondFactor refuse a UserID below 1. The Tx implements Bulk when tx
// does, and InsertUsers refuses a second factor that is not its user's
// (see Bulk). A store's Update calls it
// afresh for every call of fn, including a call that runs fn again in a
// new transaction.
func RunUpdate(tx Tx, fn func(Tx) error) error { return run(tx, true, fn) }

// run passes fn the guarded form of tx and ends it when fn returns. The
// guarded form implements Bulk exactly when tx does.
func run(tx Tx, writable bool, fn func(Tx) error) error {
	if b, ok := tx.(Bulk); ok {
		g := &bulkGuarded{guarded: guarded{tx: tx, writable: writable}, bulk: b}
		defer g.done.Store(true)
		return fn(g)
	}
	g := &guarded{tx: tx, writable: writable}
	defer g.done.Store(true)
	return fn(g)
}

// guarded is the Tx that RunView and RunUpdate pass to fn. done is atomic
// so that a Tx kept past fn and used from another goroutine is refused
// without a data race.
type guarded struct {
	tx       Tx
	writable bool
	done     atomic.Bool
}

var _ Tx = (*guarded)(nil)

// read reports whether a read may run.
func (g *guarded) read() error {
	if g.done.Load() {
		return ErrTxDone
	}
	return nil
}

// write reports whether a write may run.
func (g *guarded) write() error {
	if g.done.Load() {
		return ErrTxDone
	}
	if !g.writable {
		return ErrReadOnly
	}
	return nil
}

// checkJob returns an error unless d is a well-formed job.
func checkJob(d Delivery) error {
	switch {
	case d.Kind == JobMail && d.EndpointID != 0:
		return fmt.Errorf("store: mail job %d names endpoint %d; a mail job has EndpointID 0", d.ID, d.EndpointID)
	case d.Kind == JobWebhook && d.EndpointID < 1:
		return fmt.Errorf("store: webhook job %d names endpoint %d; endpoint ids are positive", d.ID, d.EndpointID)
	case d.Kind == JobWebhook && d.UserID != 0:
		return fmt.Errorf("store: webhook job %d names user %d; a webhook job has UserID 0", d.ID, d.UserID)
	case d.UserID < 0:
		return fmt.Errorf("store: mail job %d names user %d; user ids are positive, 0 for none", d.ID, d.UserID)
	case d.Kind != JobWebhook && d.Kind != JobMail:
		return fmt.Errorf("store: job %d has kind %q, want %q or %q", d.ID, d.Kind, JobWebhook, JobMail)
	}
	return nil
}

// Records.

func (g *guarded) PutWorkspace(w Workspace) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutWorkspace(w)
}

func (g *guarded) Workspace(slug string) (Workspace, error) {
	if err := g.read(); err != nil {
		return Workspace{}, err
	}
	return g.tx.Workspace(slug)
}

func (g *guarded) Workspaces() ([]Workspace, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.Workspaces()
}

func (g *guarded) NextID(slug string, seq Sequence) (int64, error) {
	if err := g.write(); err != nil {
		return 0, err
	}
	return g.tx.NextID(slug, seq)
}

func (g *guarded) PutUser(slug string, u User) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutUser(slug, u)
}

func (g *guarded) User(slug string, id int64) (User, error) {
	if err := g.read(); err != nil {
		return User{}, err
	}
	return g.tx.User(slug, id)
}

func (g *guarded) UserIDByUsername(slug, username string) (int64, error) {
	if err := g.read(); err != nil {
		return 0, err
	}
	return g.tx.UserIDByUsername(slug, username)
}

func (g *guarded) UserIDByEmail(slug, email string) (int64, error) {
	if err := g.read(); err != nil {
		return 0, err
	}
	return g.tx.UserIDByEmail(slug, email)
}

func (g *guarded) Users(slug string, q UserQuery) ([]User, int, error) {
	if err := g.read(); err != nil {
		return nil, 0, err
	}
	return g.tx.Users(slug, q)
}

func (g *guarded) UserRoles(slug string, userID int64) ([]int64, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.UserRoles(slug, userID)
}

func (g *guarded) AddUserRole(slug string, userID, roleID int64) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.AddUserRole(slug, userID, roleID)
}

func (g *guarded) RemoveUserRole(slug string, userID, roleID int64) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.RemoveUserRole(slug, userID, roleID)
}

func (g *guarded) UserAttributes(slug string, userID int64) (map[string]string, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.UserAttributes(slug, userID)
}

func (g *guarded) PutUserAttribute(slug string, userID int64, key, value string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutUserAttribute(slug, userID, key, value)
}

func (g *guarded) UsersByAttribute(slug string, q AttributeQuery) ([]User, int, error) {
	if err := g.read(); err != nil {
		return nil, 0, err
	}
	return g.tx.UsersByAttribute(slug, q)
}

func (g *guarded) DeleteUserAttribute(slug string, userID int64, key string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteUserAttribute(slug, userID, key)
}

func (g *guarded) ClaimMappers(slug string) ([]ClaimMapper, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.ClaimMappers(slug)
}

func (g *guarded) PutClaimMapper(slug string, m ClaimMapper) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutClaimMapper(slug, m)
}

func (g *guarded) DeleteClaimMapper(slug, attributeKey string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteClaimMapper(slug, attributeKey)
}

func (g *guarded) PutWebhook(slug string, w Webhook) error {
	if err := g.write(); err != nil {
		return err
	}
	if w.ID < 1 {
		return fmt.Errorf("store: webhook id %d; ids are positive (NextID)", w.ID)
	}
	return g.tx.PutWebhook(slug, w)
}

func (g *guarded) Webhook(slug string, id int64) (Webhook, error) {
	if err := g.read(); err != nil {
		return Webhook{}, err
	}
	return g.tx.Webhook(slug, id)
}

func (g *guarded) Webhooks(slug string, offset, limit int) ([]Webhook, int, error) {
	if err := g.read(); err != nil {
		return nil, 0, err
	}
	return g.tx.Webhooks(slug, offset, limit)
}

func (g *guarded) DeleteWebhook(slug string, id int64) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteWebhook(slug, id)
}

func (g *guarded) PutSession(slug string, s Session) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutSession(slug, s)
}

func (g *guarded) Session(slug, id string) (Session, error) {
	if err := g.read(); err != nil {
		return Session{}, err
	}
	return g.tx.Session(slug, id)
}

func (g *guarded) UserSessions(slug string, userID int64) ([]Session, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.UserSessions(slug, userID)
}

func (g *guarded) PutAPIKey(k APIKey) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutAPIKey(k)
}

func (g *guarded) APIKey(id string) (APIKey, error) {
	if err := g.read(); err != nil {
		return APIKey{}, err
	}
	return g.tx.APIKey(id)
}

func (g *guarded) APIKeys(slug string) ([]APIKey, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.APIKeys(slug)
}

func (g *guarded) DeleteAPIKey(id string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteAPIKey(id)
}

func (g *guarded) PutOAuthClient(slug string, c OAuthClient) error {
	if err := g.write(); err != nil {
		return err
	}
	if c.ID == "" {
		return errors.New("store: the OAuth client id is empty")
	}
	return g.tx.PutOAuthClient(slug, c)
}

func (g *guarded) OAuthClient(slug, id string) (OAuthClient, error) {
	if err := g.read(); err != nil {
		return OAuthClient{}, err
	}
	return g.tx.OAuthClient(slug, id)
}

func (g *guarded) OAuthClients(slug string) ([]OAuthClient, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.OAuthClients(slug)
}

func (g *guarded) DeleteOAuthClient(slug, id string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteOAuthClient(slug, id)
}

func (g *guarded) PutSigningKey(slug string, k SigningKey) error {
	if err := g.write(); err != nil {
		return err
	}
	if k.ID == "" {
		return errors.New("store: the signing key id is empty")
	}
	return g.tx.PutSigningKey(slug, k)
}

func (g *guarded) SigningKeys(slug string) ([]SigningKey, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.SigningKeys(slug)
}

func (g *guarded) DeleteSigningKey(slug, id string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteSigningKey(slug, id)
}

func (g *guarded) PutAuthRequest(slug string, r AuthRequest) error {
	if err := g.write(); err != nil {
		return err
	}
	if r.ID == "" {
		return errors.New("store: the authorization request id is empty")
	}
	return g.tx.PutAuthRequest(slug, r)
}

func (g *guarded) AuthRequest(slug, id string) (AuthRequest, error) {
	if err := g.read(); err != nil {
		return AuthRequest{}, err
	}
	return g.tx.AuthRequest(slug, id)
}

func (g *guarded) PutGrant(slug string, gr Grant) error {
	if err := g.write(); err != nil {
		return err
	}
	if gr.ID == "" {
		return errors.New("store: the grant id is empty")
	}
	return g.tx.PutGrant(slug, gr)
}

func (g *guarded) Grant(slug, id string) (Grant, error) {
	if err := g.read(); err != nil {
		return Grant{}, err
	}
	return g.tx.Grant(slug, id)
}

func (g *guarded) UserGrants(slug string, userID int64) ([]Grant, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.UserGrants(slug, userID)
}

func (g *guarded) PutRefreshToken(slug string, t RefreshToken) error {
	if err := g.write(); err != nil {
		return err
	}
	if t.ID == "" {
		return errors.New("store: the refresh token id is empty")
	}
	if t.GrantID == "" {
		return fmt.Errorf("store: refresh token %q names no grant (GrantID is empty)", t.ID)
	}
	return g.tx.PutRefreshToken(slug, t)
}

func (g *guarded) RefreshToken(slug, id string) (RefreshToken, error) {
	if err := g.read(); err != nil {
		return RefreshToken{}, err
	}
	return g.tx.RefreshToken(slug, id)
}

func (g *guarded) PutLoginAttempts(slug string, a LoginAttempts) error {
	if err := g.write(); err != nil {
		return err
	}
	if a.UserID < 1 {
		return fmt.Errorf("store: login attempts of user %d; user ids are positive", a.UserID)
	}
	return g.tx.PutLoginAttempts(slug, a)
}

func (g *guarded) LoginAttempts(slug string, userID int64) (LoginAttempts, error) {
	if err := g.read(); err != nil {
		return LoginAttempts{}, err
	}
	return g.tx.LoginAttempts(slug, userID)
}

func (g *guarded) PutSecondFactor(slug string, f SecondFactor) error {
	if err := g.write(); err != nil {
		return err
	}
	if f.UserID < 1 {
		return fmt.Errorf("store: second factor of user %d; user ids are positive", f.UserID)
	}
	return g.tx.PutSecondFactor(slug, f)
}

func (g *guarded) SecondFactor(slug string, userID int64) (SecondFactor, error) {
	if err := g.read(); err != nil {
		return SecondFactor{}, err
	}
	return g.tx.SecondFactor(slug, userID)
}

func (g *guarded) DeleteSecondFactor(slug string, userID int64) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteSecondFactor(slug, userID)
}

func (g *guarded) PutVerificationToken(slug string, t VerificationToken) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutVerificationToken(slug, t)
}

func (g *guarded) VerificationToken(slug, id string) (VerificationToken, error) {
	if err := g.read(); err != nil {
		return VerificationToken{}, err
	}
	return g.tx.VerificationToken(slug, id)
}

func (g *guarded) DeleteUser(slug string, id int64) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteUser(slug, id)
}

func (g *guarded) DeleteWorkspace(slug string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteWorkspace(slug)
}

func (g *guarded) PutIdempotency(r IdempotencyRecord) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.PutIdempotency(r)
}

func (g *guarded) Idempotency(slug, scope, key string) (IdempotencyRecord, error) {
	if err := g.read(); err != nil {
		return IdempotencyRecord{}, err
	}
	return g.tx.Idempotency(slug, scope, key)
}

func (g *guarded) DeleteIdempotency(slug, scope, key string) error {
	if err := g.write(); err != nil {
		return err
	}
	return g.tx.DeleteIdempotency(slug, scope, key)
}

func (g *guarded) DeleteExpiredIdempotency(now time.Time, limit int) (int, error) {
	if err := g.write(); err != nil {
		return 0, err
	}
	return g.tx.DeleteExpiredIdempotency(now, limit)
}

func (g *guarded) DeleteEndedSessions(slug string, before time.Time, limit int) (int, error) {
	if err := g.write(); err != nil {
		return 0, err
	}
	return g.tx.DeleteEndedSessions(slug, before, limit)
}

func (g *guarded) DeleteExpiredTokens(slug string, before time.Time, limit int) (int, error) {
	if err := g.write(); err != nil {
		return 0, err
	}
	return g.tx.DeleteExpiredTokens(slug, before, limit)
}

func (g *guarded) DeleteFinishedDeliveries(slug string, kind JobKind, status DeliveryStatus, before time.Time, limit int) (int, error) {
	if err := g.write(); err != nil {
		return 0, err
	}
	return g.tx.DeleteFinishedDeliveries(slug, kind, status, before, limit)
}

// Queue.

func (g *guarded) PutDelivery(slug string, d Delivery) error {
	if err := g.write(); err != nil {
		return err
	}
	if err := checkJob(d); err != nil {
		return err
	}
	return g.tx.PutDelivery(slug, d)
}

func (g *guarded) Delivery(slug string, id int64) (Delivery, error) {
	if err := g.read(); err != nil {
		return Delivery{}, err
	}
	return g.tx.Delivery(slug, id)
}

func (g *guarded) ClaimDelivery(slug string, id int64) (Delivery, bool, error) {
	if err := g.write(); err != nil {
		return Delivery{}, false, err
	}
	return g.tx.ClaimDelivery(slug, id)
}

func (g *guarded) Deliveries(slug string, endpointID int64) ([]Delivery, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.Deliveries(slug, endpointID)
}

func (g *guarded) DeliveriesPage(slug string, endpointID int64, offset, limit int) ([]Delivery, int, error) {
	if err := g.read(); err != nil {
		return nil, 0, err
	}
	return g.tx.DeliveriesPage(slug, endpointID, offset, limit)
}

func (g *guarded) MailJobsPage(slug string, offset, limit int) ([]Delivery, int, error) {
	if err := g.read(); err != nil {
		return nil, 0, err
	}
	return g.tx.MailJobsPage(slug, offset, limit)
}

func (g *guarded) UserSessionsPage(slug string, userID int64, offset, limit int) ([]Session, int, error) {
	if err := g.read(); err != nil {
		return nil, 0, err
	}
	return g.tx.UserSessionsPage(slug, userID, offset, limit)
}

func (g *guarded) WebhooksForEvent(slug, eventType string) ([]Webhook, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.WebhooksForEvent(slug, eventType)
}

func (g *guarded) MailJobs(slug string) ([]Delivery, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.MailJobs(slug)
}

func (g *guarded) DueDeliveries(now time.Time, limit int) ([]QueuedDelivery, error) {
	if err := g.read(); err != nil {
		return nil, err
	}
	return g.tx.DueDeliveries(now, limit)
}

func (g *guarded) NextDueAt() (time.Time, bool, error) {
	if err := g.read(); err != nil {
		return time.Time{}, false, err
	}
	return g.tx.NextDueAt()
}

func (g *guarded) PendingDeliveries() (int, error) {
	if err := g.read(); err != nil {
		return 0, err
	}
	return g.tx.PendingDeliveries()
}

// Bulk.

// bulkGuarded is the guarded form of a Tx that implements Bulk: the
// methods of guarded and those of Bulk, with the same checks.
type bulkGuarded struct {
	guarded
	bulk Bulk
}

var _ interface {
	Tx
	Bulk
} = (*bulkGuarded)(nil)

func (g *bulkGuarded) UserKeysTaken(slug string, usernames, emails []string) ([]bool, []bool, error) {
	if err := g.read(); err != nil {
		return nil, nil, err
	}
	return g.bulk.UserKeysTaken(slug, usernames, emails)
}

func (g *bulkGuarded) InsertUsers(slug string, users []UserInsert) error {
	if err := g.write(); err != nil {
		return err
	}
	for _, u := range users {
		if f := u.SecondFactor; f != nil && (f.UserID != u.User.ID || f.UserID < 1) {
			return fmt.Errorf("store: second factor of user %d comes with user %d; it must be that user's, and user ids are positive", f.UserID, u.User.ID)
		}
	}
	return g.bulk.InsertUsers(slug, users)
}

func (g *bulkGuarded) UserWithClaimInputs(slug string, id int64) (User, map[string]string, []ClaimMapper, error) {
	if err := g.read(); err != nil {
		return User{}, nil, nil, err
	}
	return g.bulk.UserWithClaimInputs(slug, id)
}

func (g *bulkGuarded) UserWithAttributes(slug string, id int64) (User, map[string]string, error) {
	if err := g.read(); err != nil {
		return User{}, nil, err
	}
	return g.bulk.UserWithAttributes(slug, id)
}
