package identity_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// The audit trail of accounts and sign-ins: for every method of users,
// attributes, passwords, resets, verification, second factors, lockout,
// sessions, imports, exports and the provider's sign-ins, the records it
// writes (action, actor, target, outcome, reason, request and changes,
// written out); that a record is written with its change or not at all;
// and that no secret reaches a record.

// The actor and the request of the calls under test: an API key of the
// REST adapter, from a client whose address and browser are known.
var (
	auditActor = identity.Actor{Kind: identity.ActorAPIKey, ID: "k_7Qm2", Display: "provisioning"}
	auditInfo  = identity.RequestInfo{Address: netip.MustParseAddr("203.0.113.7"), UserAgent: "curl/8.5.0", RequestID: "req-9f2c"}
	auditReq   = identity.AuditRequest{Address: "203.0.113.7", UserAgent: "curl/8.5.0", RequestID: "req-9f2c"}
)

// The targets and actors of the records, written out: ada is user 1 of
// every env; bob and carol, when a case makes them, user 2.
var (
	adaTarget   = identity.AuditTarget{Kind: "user", ID: "1", Display: "ada"}
	adaActor    = identity.Actor{Kind: "user", ID: "1", Display: "ada"}
	systemActor = identity.Actor{Kind: "system"}
)

// auditEnv is an oidcEnv with the context of the calls under test, and
// what a case's setup made for its call.
type auditEnv struct {
	*oidcEnv
	// actx names auditActor and carries auditInfo.
	actx context.Context
	// token is a reset or verification token; secret and codes a TOTP
	// factor's; challenge a sign-in's waiting for its second factor;
	// session a session of ada; request an authorization request
	// waiting for its sign-in.
	token, secret, challenge string
	codes                    []string
	session                  identity.CreatedSession
	request                  string
}

func newAuditEnv(t *testing.T) *auditEnv {
	t.Helper()
	e := newOIDCEnv(t, nil)
	actx := identity.WithRequestInfo(identity.WithActor(e.ctx, auditActor), auditInfo)
	return &auditEnv{oidcEnv: e, actx: actx}
}

// settings changes the workspace's settings with change, with the
// context of the setup (no actor).
func (e *auditEnv) settings(change func(*identity.Settings)) {
	e.t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	change(&s)
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		e.t.Fatalf("UpdateSettings: %v", err)
	}
}

// lockAda makes one failure lock ada for duration, and fails her once.
func (e *auditEnv) lockAda(duration time.Duration) {
	e.t.Helper()
	e.settings(func(s *identity.Settings) { s.Lockout = identity.LockoutPolicy{Threshold: 1, Duration: duration} })
	_, err := e.ws.Authenticate(e.ctx, "ada", "not the password")
	identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
}

// startSession starts a session of ada (e.session).
func (e *auditEnv) startSession() {
	e.t.Helper()
	s, err := e.ws.CreateSession(e.ctx, e.ada.ID, &identity.SessionOptions{AMR: []string{"pwd"}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.session = s
}

// enrolAda enrols a TOTP factor of ada (e.secret, e.codes).
func (e *auditEnv) enrolAda() { e.secret, e.codes = e.enrol(e.ada.ID) }

// requireMFA makes the workspace require a second factor and starts
// ada's sign-in, which asks her to enrol one (e.challenge).
func (e *auditEnv) requireMFA() {
	e.settings(func(s *identity.Settings) { s.MFA = identity.MFARequired })
	e.challenge = e.testEnv.challenge(identity.CodeMFAEnrollmentRequired)
}

// pending stores an authorization request of the web client
// (e.request).
func (e *auditEnv) pending() { e.request = e.authorize(e.webRequest(), "").RequestID }

// providerChallenge signs ada in with her password for e.request, and
// returns the challenge of her second factor.
func (e *auditEnv) providerChallenge() string {
	e.t.Helper()
	_, err := e.ws.Provider().SignIn(e.ctx, e.request, "ada", adaPassword)
	identitytest.WantCode(e.t, err, identity.CodeMFARequired)
	return err.(*identity.Error).Challenge
}

// providerSecondFactor ends ada's sign-in for e.request as the hosted
// page does: her second factor's code, then the completion with the
// session options it gives.
func (e *auditEnv) providerSecondFactor(code string) identity.SignIn {
	e.t.Helper()
	v, err := e.ws.Provider().VerifySecondFactor(e.actx, e.request, e.challenge, code)
	if err != nil {
		e.t.Fatalf("Provider.VerifySecondFactor: %v", err)
	}
	s, err := e.ws.Provider().CompleteSignIn(e.actx, e.request, v.User.ID, v.SessionOptions())
	if err != nil {
		e.t.Fatalf("CompleteSignIn: %v", err)
	}
	return s
}

// verificationToken queues a verification email to ada and sends it;
// it returns the token of its link.
func (e *auditEnv) verificationToken() string {
	e.t.Helper()
	if err := e.ws.SendVerificationEmail(e.ctx, e.ada.ID); err != nil {
		e.t.Fatal(err)
	}
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.sendMail(e.queue(nil), jobs[len(jobs)-1].ID)
}

// trail returns every record of the workspace written at or after since,
// oldest first; the records of one call share a microsecond of the fake
// clock, in no order, so they are sorted by action, reason and target.
func (e *testEnv) trail(since time.Time) []identity.AuditRecord {
	e.t.Helper()
	var out []identity.AuditRecord
	page := &identity.AuditPageOptions{Oldest: true, Limit: identity.MaxPageLimit}
	for {
		p, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Since: since}, page)
		if err != nil {
			e.t.Fatalf("ListAuditRecords: %v", err)
		}
		out = append(out, p.Records...)
		if !p.HasMore {
			break
		}
		page.Cursor = p.NextCursor
	}
	slices.SortStableFunc(out, func(a, b identity.AuditRecord) int {
		return strings.Compare(string(a.Action)+" "+a.Reason+" "+a.Target.ID, string(b.Action)+" "+b.Reason+" "+b.Target.ID)
	})
	return out
}

// ignoreIDAndTime leaves out of comparisons what a record draws or
// stamps: its id and its time.
var ignoreIDAndTime = cmpopts.IgnoreFields(identity.AuditRecord{}, "ID", "Time")

// done is a record of the calls under test: actor auditActor, success.
func done(action identity.AuditAction, target identity.AuditTarget, changes map[string]identity.AuditChange) identity.AuditRecord {
	return identity.AuditRecord{Workspace: "acme", Actor: auditActor, Action: action, Target: target,
		Outcome: identity.OutcomeSuccess, Request: auditReq, Changes: changes}
}

// refused is a record of a refusal of the calls under test.
func refused(action identity.AuditAction, target identity.AuditTarget, reason string) identity.AuditRecord {
	return identity.AuditRecord{Workspace: "acme", Actor: auditActor, Action: action, Target: target,
		Outcome: identity.OutcomeFailure, Reason: reason, Request: auditReq}
}

// adaSignedIn is the record of ada's sign-in: she is its actor.
func adaSignedIn(changes map[string]identity.AuditChange) identity.AuditRecord {
	r := done(identity.AuditSignInSucceeded, adaTarget, changes)
	r.Actor = adaActor
	return r
}

// withReason is r with the reason.
func withReason(r identity.AuditRecord, reason string) identity.AuditRecord {
	r.Reason = reason
	return r
}

// after and before are a change to a value from none, and to none.
func after(v any) identity.AuditChange  { return identity.AuditChange{After: v} }
func before(v any) identity.AuditChange { return identity.AuditChange{Before: v} }

// changed is a change from b to a.
func changed(b, a any) identity.AuditChange { return identity.AuditChange{Before: b, After: a} }

type changes = map[string]identity.AuditChange

// TestAuditAccounts: every method of accounts and sign-ins writes the
// records written out here, and only those: a record per change, a
// refusal's record with its reason, none for a no-op. Each case runs in
// an env of its own: its setup (without an actor), then its call, with
// auditActor and auditInfo, one second later on the fake clock; the
// records compared are those written from that second on.
func TestAuditAccounts(t *testing.T) {
	export := identity.AuditTarget{Kind: "workspace", ID: "acme", Display: "acme"}
	tests := []struct {
		name  string
		setup func(e *auditEnv)
		// run calls the method under test with e.actx, checks its
		// outcome, and returns the records it must have written.
		run func(e *auditEnv) []identity.AuditRecord
	}{
		{"CreateUser", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.CreateUser(e.actx, newUserNamed("bob")); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserCreated, identity.AuditTarget{Kind: "user", ID: "2", Display: "bob"},
				changes{"username": after("bob"), "email": after("bob@example.com"), "fullName": after("User bob")})}
		}},
		{"CreateUser refused", nil, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.CreateUser(e.actx, newUserNamed("ada"))
			identitytest.WantCode(e.t, err, identity.CodeConflict)
			return nil
		}},
		{"ImportUsers", nil, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.ImportUsers(e.actx, []identity.ImportedUser{{
				Username: "carol", Email: "carol@example.com", FullName: "Carol",
				PasswordHash: "pbkdf2_sha256$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA=",
				Attributes:   map[string]string{"dept": "ops"}, Roles: []identity.RoleRef{identity.RoleName("auditor")}, Groups: []string{"night-shift"},
			}})
			if err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{
				done(identity.AuditGroupCreated, identity.AuditTarget{Kind: "group", ID: "1", Display: "night-shift"}, changes{"name": after("night-shift")}),
				done(identity.AuditRoleCreated, identity.AuditTarget{Kind: "role", ID: "1", Display: "auditor"}, changes{"name": after("auditor")}),
				done(identity.AuditUserImported, identity.AuditTarget{Kind: "user", ID: "2", Display: "carol"},
					changes{"username": after("carol"), "email": after("carol@example.com"), "fullName": after("Carol")}),
			}
		}},
		{"UpdateUser of a verified email", func(e *auditEnv) {
			if _, err := e.ws.SetEmailVerified(e.ctx, e.ada.ID, true); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.UpdateUser(e.actx, e.ada.ID, identity.UserUpdate{Email: "ada@lovelace.org", FullName: "Ada King"}); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserUpdated, adaTarget, changes{
				"email": changed("ada@example.com", "ada@lovelace.org"), "fullName": changed("Ada Lovelace", "Ada King"),
				"emailVerified": changed(true, false),
			})}
		}},
		{"UpdateUser of the full name", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.UpdateUser(e.actx, e.ada.ID, identity.UserUpdate{Email: "ada@example.com", FullName: "Ada King"}); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserUpdated, adaTarget, changes{"fullName": changed("Ada Lovelace", "Ada King")})}
		}},
		{"DisableUser", (*auditEnv).startSession, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.DisableUser(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserDisabled, adaTarget,
				changes{"enabled": changed(true, false), "sessionsRevoked": after(float64(1))})}
		}},
		{"DisableUser of a disabled user", func(e *auditEnv) {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.DisableUser(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"EnableUser", func(e *auditEnv) {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.EnableUser(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserEnabled, adaTarget, changes{"enabled": changed(false, true)})}
		}},
		{"SetEmailVerified", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.SetEmailVerified(e.actx, e.ada.ID, true); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserEmailVerified, adaTarget, changes{"emailVerified": changed(false, true)})}
		}},
		{"SetEmailVerified false", func(e *auditEnv) {
			if _, err := e.ws.SetEmailVerified(e.ctx, e.ada.ID, true); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.SetEmailVerified(e.actx, e.ada.ID, false); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserEmailUnverified, adaTarget, changes{"emailVerified": changed(true, false)})}
		}},
		{"SetEmailVerified unchanged", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.SetEmailVerified(e.actx, e.ada.ID, false); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"ConfirmEmail", func(e *auditEnv) {
			e.setSMTP(resetSMTP())
			e.token = e.verificationToken()
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.ConfirmEmail(e.actx, e.token); err != nil {
				e.t.Fatal(err)
			}
			// The link proved the mailbox ada's: she is the actor.
			r := done(identity.AuditUserEmailVerified, adaTarget, changes{"emailVerified": changed(false, true)})
			r.Actor = adaActor
			return []identity.AuditRecord{r}
		}},
		{"SendVerificationEmail", func(e *auditEnv) { e.setSMTP(resetSMTP()) }, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.SendVerificationEmail(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditVerificationSent, adaTarget, changes{"email": after("ada@example.com")})}
		}},
		{"SetAttribute", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.SetAttribute(e.actx, e.ada.ID, "dept", "R&D", nil); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserAttributeSet, adaTarget, changes{"attributes.dept": after("R&D")})}
		}},
		{"SetAttribute to another value", func(e *auditEnv) { e.attr(e.ada.ID, "dept", "R&D") }, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.SetAttribute(e.actx, e.ada.ID, "dept", "Mathematics", nil); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserAttributeSet, adaTarget, changes{"attributes.dept": changed("R&D", "Mathematics")})}
		}},
		{"SetAttribute to its value", func(e *auditEnv) { e.attr(e.ada.ID, "dept", "R&D") }, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.SetAttribute(e.actx, e.ada.ID, "dept", "R&D", nil); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"DeleteAttribute", func(e *auditEnv) { e.attr(e.ada.ID, "dept", "R&D") }, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.DeleteAttribute(e.actx, e.ada.ID, "dept", nil); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserAttributeDeleted, adaTarget, changes{"attributes.dept": before("R&D")})}
		}},
		{"DeleteAttribute of a missing one", nil, func(e *auditEnv) []identity.AuditRecord {
			identitytest.WantCode(e.t, errOf(e.ws.DeleteAttribute(e.actx, e.ada.ID, "dept", nil)), identity.CodeNotFound)
			return nil
		}},
		{"AssignRole", func(e *auditEnv) { e.role("admin") }, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.AssignRole(e.actx, e.ada.ID, 1); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserRoleAssigned, adaTarget, changes{"role": after("admin")})}
		}},
		{"AssignRole assigned", func(e *auditEnv) {
			if err := e.ws.AssignRole(e.ctx, e.ada.ID, e.role("admin").ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.AssignRole(e.actx, e.ada.ID, 1); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"RemoveRole", func(e *auditEnv) {
			if err := e.ws.AssignRole(e.ctx, e.ada.ID, e.role("admin").ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.RemoveRole(e.actx, e.ada.ID, 1); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditUserRoleRemoved, adaTarget, changes{"role": before("admin")})}
		}},
		{"SetPassword", nil, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.SetPassword(e.actx, e.ada.ID, "a brand new passphrase"); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditPasswordSet, adaTarget, nil)}
		}},
		{"ChangePassword", nil, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.ChangePassword(e.actx, e.ada.ID, adaPassword, "a brand new passphrase"); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditPasswordChanged, adaTarget, nil)}
		}},
		{"ChangePassword with a wrong current password", nil, func(e *auditEnv) []identity.AuditRecord {
			err := e.ws.ChangePassword(e.actx, e.ada.ID, "not the password", "a brand new passphrase")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditPasswordChanged, adaTarget, "wrong_password")}
		}},
		{"ChangePassword with lockout off", func(e *auditEnv) {
			e.settings(func(s *identity.Settings) { s.Lockout.Disabled = true })
		}, func(e *auditEnv) []identity.AuditRecord {
			err := e.ws.ChangePassword(e.actx, e.ada.ID, "not the password", "a brand new passphrase")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditPasswordChanged, adaTarget, "wrong_password")}
		}},
		{"ChangePassword of a locked account", func(e *auditEnv) { e.lockAda(time.Hour) }, func(e *auditEnv) []identity.AuditRecord {
			err := e.ws.ChangePassword(e.actx, e.ada.ID, adaPassword, "a brand new passphrase")
			identitytest.WantCode(e.t, err, identity.CodeLocked)
			return []identity.AuditRecord{refused(identity.AuditPasswordChanged, adaTarget, "locked")}
		}},
		{"ChangePassword of a user without a password", func(e *auditEnv) {
			if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "carol", Email: "carol@example.com", FullName: "Carol"}}); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			err := e.ws.ChangePassword(e.actx, 2, "whatever it is", "a brand new passphrase")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditPasswordChanged, identity.AuditTarget{Kind: "user", ID: "2", Display: "carol"}, "no_password")}
		}},
		{"RequestPasswordReset", func(e *auditEnv) { e.setSMTP(resetSMTP()) }, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.RequestPasswordReset(e.actx, "ada@example.com", nil); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditPasswordResetRequested, adaTarget, nil)}
		}},
		{"RequestPasswordReset of an address nobody has", func(e *auditEnv) { e.setSMTP(resetSMTP()) }, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.RequestPasswordReset(e.actx, "nobody@example.com", nil); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"ResetPassword", func(e *auditEnv) {
			e.setSMTP(resetSMTP())
			e.startSession()
			e.token = e.resetToken(e.queue(nil))
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.ResetPassword(e.actx, e.token, "a brand new passphrase"); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditPasswordReset, adaTarget, changes{"sessionsRevoked": after(float64(1))})}
		}},
		{"ResetPassword of a locked account", func(e *auditEnv) {
			e.lockAda(time.Hour) // at t0: until t0 + 1 h
			e.settings(func(s *identity.Settings) { s.SMTP = resetSMTP() })
			e.token = e.resetToken(e.queue(nil))
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.ResetPassword(e.actx, e.token, "a brand new passphrase"); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{
				withReason(done(identity.AuditAccountUnlocked, adaTarget, changes{
					"until": before("2026-03-14T16:09:26.535897Z"), "failures": changed(float64(1), float64(0)),
				}), "password_reset"),
				done(identity.AuditPasswordReset, adaTarget, changes{"sessionsRevoked": after(float64(0))}),
			}
		}},
		{"UnlockUser", func(e *auditEnv) { e.lockAda(time.Hour) }, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.UnlockUser(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{withReason(done(identity.AuditAccountUnlocked, adaTarget, changes{
				"until": before("2026-03-14T16:09:26.535897Z"), "failures": changed(float64(1), float64(0)),
			}), "admin")}
		}},
		{"UnlockUser of a user with failures", func(e *auditEnv) {
			_, err := e.ws.Authenticate(e.ctx, "ada", "not the password")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
		}, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.UnlockUser(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{withReason(done(identity.AuditAccountUnlocked, adaTarget, changes{
				"failures": changed(float64(1), float64(0)),
			}), "admin")}
		}},
		{"UnlockUser of a user without failures", nil, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.UnlockUser(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"Authenticate", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.Authenticate(e.actx, "ada", adaPassword); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{adaSignedIn(changes{"method": after("password")})}
		}},
		{"Authenticate by email", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.Authenticate(e.actx, "ADA@example.com", adaPassword); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{adaSignedIn(changes{"method": after("password")})}
		}},
		{"Authenticate with lockout off", func(e *auditEnv) {
			e.settings(func(s *identity.Settings) { s.Lockout.Disabled = true })
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.Authenticate(e.actx, "ada", adaPassword); err != nil {
				e.t.Fatal(err)
			}
			_, err := e.ws.Authenticate(e.actx, "ada", "not the password")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{
				refused(identity.AuditSignInFailed, adaTarget, "wrong_password"),
				adaSignedIn(changes{"method": after("password")}),
			}
		}},
		{"Authenticate of an unknown login", nil, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "Nobody", "whatever it is")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, identity.AuditTarget{Kind: "user", Display: "Nobody"}, "unknown_user")}
		}},
		{"Authenticate of a login too long to keep", nil, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, strings.Repeat("x", 300), "whatever it is")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, identity.AuditTarget{Kind: "user", Display: strings.Repeat("x", 255)}, "unknown_user")}
		}},
		{"Authenticate of a login with NUL", nil, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "No\x00body", "whatever it is")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, identity.AuditTarget{Kind: "user", Display: "No\uFFFDbody"}, "unknown_user")}
		}},
		{"Authenticate with a wrong password", nil, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", "not the password")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "wrong_password")}
		}},
		{"Authenticate that locks", func(e *auditEnv) {
			e.settings(func(s *identity.Settings) { s.Lockout = identity.LockoutPolicy{Threshold: 1, Duration: time.Hour} })
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", "not the password")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{
				done(identity.AuditAccountLocked, adaTarget, changes{"until": after("2026-03-14T16:09:27.535897Z")}),
				refused(identity.AuditSignInFailed, adaTarget, "wrong_password"),
			}
		}},
		{"Authenticate of a locked account", func(e *auditEnv) { e.lockAda(time.Hour) }, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", adaPassword)
			identitytest.WantCode(e.t, err, identity.CodeLocked)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "locked")}
		}},
		{"Authenticate after the lock ended", func(e *auditEnv) { e.lockAda(time.Second) }, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.Authenticate(e.actx, "ada", adaPassword); err != nil {
				e.t.Fatal(err)
			}
			// The lock's end is the system's doing, seen by this call.
			unlocked := withReason(done(identity.AuditAccountUnlocked, adaTarget, changes{"until": before("2026-03-14T15:09:27.535897Z")}), "expiry")
			unlocked.Actor = systemActor
			return []identity.AuditRecord{unlocked, adaSignedIn(changes{"method": after("password")})}
		}},
		{"Authenticate of a disabled user", func(e *auditEnv) {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", adaPassword)
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "disabled")}
		}},
		{"Authenticate of a user without a password", func(e *auditEnv) {
			if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "carol", Email: "carol@example.com", FullName: "Carol"}}); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "carol", "whatever it is")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, identity.AuditTarget{Kind: "user", ID: "2", Display: "carol"}, "no_password")}
		}},
		{"Authenticate throttled", func(e *auditEnv) {
			e.settings(func(s *identity.Settings) { s.Throttle.PerLogin = identity.Rate{Count: 1, Window: time.Minute} })
			_, err := e.ws.Authenticate(e.ctx, "ada", "not the password")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", adaPassword)
			identitytest.WantCode(e.t, err, identity.CodeRateLimited)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "throttled")}
		}},
		{"Authenticate of an unverified email", func(e *auditEnv) {
			e.settings(func(s *identity.Settings) { s.RequireVerifiedEmail = true })
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", adaPassword)
			identitytest.WantCode(e.t, err, identity.CodeEmailUnverified)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "email_unverified")}
		}},
		{"Authenticate that asks for the second factor", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Authenticate(e.actx, "ada", adaPassword)
			identitytest.WantCode(e.t, err, identity.CodeMFARequired)
			return nil
		}},
		{"Login", nil, func(e *auditEnv) []identity.AuditRecord {
			created, err := e.ws.Login(e.actx, "ada", adaPassword)
			if err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{
				done(identity.AuditSessionCreated, adaTarget, changes{"sessionId": after(created.Session.ID)}),
				adaSignedIn(changes{"method": after("password")}),
			}
		}},
		{"VerifySecondFactor", func(e *auditEnv) {
			e.enrolAda()
			e.challenge = e.testEnv.challenge(identity.CodeMFARequired)
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.VerifySecondFactor(e.actx, e.challenge, e.code(e.secret, 0)); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{adaSignedIn(changes{"method": after("password+totp")})}
		}},
		{"VerifySecondFactor with a recovery code", func(e *auditEnv) {
			e.enrolAda()
			e.challenge = e.testEnv.challenge(identity.CodeMFARequired)
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.VerifySecondFactor(e.actx, e.challenge, e.codes[3]); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{
				done(identity.AuditSecondFactorRecoveryUsed, adaTarget, changes{"codesLeft": after(float64(9))}),
				adaSignedIn(changes{"method": after("recovery_code")}),
			}
		}},
		{"VerifySecondFactor with a wrong code", func(e *auditEnv) {
			e.enrolAda()
			e.challenge = e.testEnv.challenge(identity.CodeMFARequired)
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.VerifySecondFactor(e.actx, e.challenge, "000000")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "wrong_code")}
		}},
		{"VerifySecondFactor with lockout off", func(e *auditEnv) {
			e.enrolAda()
			e.settings(func(s *identity.Settings) { s.Lockout.Disabled = true })
			e.challenge = e.testEnv.challenge(identity.CodeMFARequired)
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.VerifySecondFactor(e.actx, e.challenge, "000000")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "wrong_code")}
		}},
		{"VerifySecondFactor that enrols", func(e *auditEnv) {
			e.requireMFA()
			en, err := e.ws.BeginChallengeEnrollment(e.ctx, e.challenge)
			if err != nil {
				e.t.Fatal(err)
			}
			e.secret = en.Secret
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.VerifySecondFactor(e.actx, e.challenge, e.code(e.secret, 0)); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{
				done(identity.AuditSecondFactorEnrolled, adaTarget, nil),
				adaSignedIn(changes{"method": after("password+totp")}),
			}
		}},
		{"BeginTOTPEnrollment", nil, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.BeginTOTPEnrollment(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSecondFactorEnrollStarted, adaTarget, nil)}
		}},
		{"BeginTOTPEnrollment resumed", func(e *auditEnv) {
			if _, err := e.ws.BeginTOTPEnrollment(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.BeginTOTPEnrollment(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"BeginChallengeEnrollment", (*auditEnv).requireMFA, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.BeginChallengeEnrollment(e.actx, e.challenge); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSecondFactorEnrollStarted, adaTarget, nil)}
		}},
		{"ConfirmTOTPEnrollment", func(e *auditEnv) {
			en, err := e.ws.BeginTOTPEnrollment(e.ctx, e.ada.ID)
			if err != nil {
				e.t.Fatal(err)
			}
			e.secret = en.Secret
		}, func(e *auditEnv) []identity.AuditRecord {
			// A wrong code changes nothing and is no sign-in: no record.
			if _, err := e.ws.ConfirmTOTPEnrollment(e.actx, e.ada.ID, "000000"); identity.ErrorCode(err) != identity.CodeInvalid {
				e.t.Fatalf("a wrong code: %v, want CodeInvalid", err)
			}
			if _, err := e.ws.ConfirmTOTPEnrollment(e.actx, e.ada.ID, e.code(e.secret, 0)); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSecondFactorEnrolled, adaTarget, nil)}
		}},
		{"RemoveSecondFactor", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.RemoveSecondFactor(e.actx, e.ada.ID, e.code(e.secret, 0)); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSecondFactorRemoved, adaTarget, nil)}
		}},
		{"RemoveSecondFactor with a recovery code", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.RemoveSecondFactor(e.actx, e.ada.ID, e.codes[0]); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{
				done(identity.AuditSecondFactorRecoveryUsed, adaTarget, changes{"codesLeft": after(float64(9))}),
				done(identity.AuditSecondFactorRemoved, adaTarget, nil),
			}
		}},
		{"RemoveSecondFactor with a wrong code", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			err := e.ws.RemoveSecondFactor(e.actx, e.ada.ID, "000000")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSecondFactorRemoved, adaTarget, "wrong_code")}
		}},
		{"ResetMFA", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.ResetMFA(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSecondFactorReset, adaTarget, nil)}
		}},
		{"ResetMFA of a user without", nil, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.ResetMFA(e.actx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return nil
		}},
		{"RegenerateRecoveryCodes", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.RegenerateRecoveryCodes(e.actx, e.ada.ID, e.code(e.secret, 0)); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSecondFactorCodesRenewed, adaTarget, nil)}
		}},
		{"RegenerateRecoveryCodes with a wrong code", (*auditEnv).enrolAda, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.RegenerateRecoveryCodes(e.actx, e.ada.ID, "000000")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSecondFactorCodesRenewed, adaTarget, "wrong_code")}
		}},
		{"CreateSession", nil, func(e *auditEnv) []identity.AuditRecord {
			created, err := e.ws.CreateSession(e.actx, e.ada.ID, nil)
			if err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditSessionCreated, adaTarget, changes{"sessionId": after(created.Session.ID)})}
		}},
		{"RevokeSession", (*auditEnv).startSession, func(e *auditEnv) []identity.AuditRecord {
			for range 2 { // the second, of a revoked session, changes nothing
				if err := e.ws.RevokeSession(e.actx, e.session.Session.ID); err != nil {
					e.t.Fatal(err)
				}
			}
			return []identity.AuditRecord{withReason(done(identity.AuditSessionRevoked, adaTarget, changes{"sessionId": before(e.session.Session.ID)}), "revoked")}
		}},
		{"RevokeUserSession", (*auditEnv).startSession, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.RevokeUserSession(e.actx, e.ada.ID, e.session.Session.ID); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{withReason(done(identity.AuditSessionRevoked, adaTarget, changes{"sessionId": before(e.session.Session.ID)}), "revoked")}
		}},
		{"Provider SignIn", (*auditEnv).pending, func(e *auditEnv) []identity.AuditRecord {
			s, err := e.ws.Provider().SignIn(e.actx, e.request, "ada", adaPassword)
			if err != nil {
				e.t.Fatal(err)
			}
			// One record of the sign-in, with the client and the session.
			return []identity.AuditRecord{adaSignedIn(changes{
				"method": after("password"), "clientId": after(e.web.ID), "sessionId": after(s.Session.ID),
			})}
		}},
		{"Provider SignIn with a wrong password", (*auditEnv).pending, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Provider().SignIn(e.actx, e.request, "ada", "not the password")
			identitytest.WantCode(e.t, err, identity.CodeUnauthenticated)
			return []identity.AuditRecord{refused(identity.AuditSignInFailed, adaTarget, "wrong_password")}
		}},
		{"Provider CompleteSignIn", (*auditEnv).pending, func(e *auditEnv) []identity.AuditRecord {
			s, err := e.ws.Provider().CompleteSignIn(e.actx, e.request, e.ada.ID, &identity.SessionOptions{AMR: []string{"pwd", "otp", "mfa"}})
			if err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{adaSignedIn(changes{
				"method": after("password+totp"), "clientId": after(e.web.ID), "sessionId": after(s.Session.ID),
			})}
		}},
		{"Provider CompleteSignIn of a program's own method", (*auditEnv).pending, func(e *auditEnv) []identity.AuditRecord {
			s, err := e.ws.Provider().CompleteSignIn(e.actx, e.request, e.ada.ID, &identity.SessionOptions{AMR: []string{"hwk", "user"}})
			if err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{adaSignedIn(changes{
				"method": after("hwk+user"), "clientId": after(e.web.ID), "sessionId": after(s.Session.ID),
			})}
		}},
		// A sign-in at the provider with a second factor writes one
		// sign_in.succeeded, when the request is completed, with the
		// method the code was: a TOTP code or a recovery code.
		{"Provider VerifySecondFactor, then CompleteSignIn", func(e *auditEnv) {
			e.enrolAda()
			e.pending()
			e.challenge = e.providerChallenge()
		}, func(e *auditEnv) []identity.AuditRecord {
			s := e.providerSecondFactor(e.code(e.secret, 0))
			return []identity.AuditRecord{adaSignedIn(changes{
				"method": after("password+totp"), "clientId": after(e.web.ID), "sessionId": after(s.Session.ID),
			})}
		}},
		{"Provider VerifySecondFactor with a recovery code, then CompleteSignIn", func(e *auditEnv) {
			e.enrolAda()
			e.pending()
			e.challenge = e.providerChallenge()
		}, func(e *auditEnv) []identity.AuditRecord {
			s := e.providerSecondFactor(e.codes[3])
			return []identity.AuditRecord{
				done(identity.AuditSecondFactorRecoveryUsed, adaTarget, changes{"codesLeft": after(float64(9))}),
				adaSignedIn(changes{"method": after("recovery_code"), "clientId": after(e.web.ID), "sessionId": after(s.Session.ID)}),
			}
		}},
		{"Provider VerifySecondFactor of a request gone", func(e *auditEnv) {
			e.enrolAda()
			e.pending()
			e.challenge = e.providerChallenge()
		}, func(e *auditEnv) []identity.AuditRecord {
			_, err := e.ws.Provider().VerifySecondFactor(e.actx, "no-such-request", e.challenge, e.code(e.secret, 0))
			identitytest.WantCode(e.t, err, identity.CodeTokenInvalid)
			// The challenge is left for the request it was for.
			s := e.providerSecondFactor(e.code(e.secret, 0))
			return []identity.AuditRecord{adaSignedIn(changes{
				"method": after("password+totp"), "clientId": after(e.web.ID), "sessionId": after(s.Session.ID),
			})}
		}},
		{"Provider ResumeSignIn", func(e *auditEnv) {
			e.startSession()
			e.pending()
		}, func(e *auditEnv) []identity.AuditRecord {
			if _, err := e.ws.Provider().ResumeSignIn(e.actx, e.request, e.session.Secret); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{adaSignedIn(changes{
				"method": after("password"), "clientId": after(e.web.ID), "sessionId": after(e.session.Session.ID),
			})}
		}},
		{"ExportUsers", func(e *auditEnv) { e.user("bob") }, func(e *auditEnv) []identity.AuditRecord {
			if err := e.ws.ExportUsers(e.actx, func(identity.ImportedUser) error { return nil }); err != nil {
				e.t.Fatal(err)
			}
			return []identity.AuditRecord{done(identity.AuditExport, export, changes{"users": after(float64(2))})}
		}},
		{"ExportUsers stopped", func(e *auditEnv) { e.user("bob") }, func(e *auditEnv) []identity.AuditRecord {
			stop := errors.New("disk full")
			if err := e.ws.ExportUsers(e.actx, func(identity.ImportedUser) error { return stop }); !errors.Is(err, stop) {
				e.t.Fatalf("ExportUsers = %v, want the callback's error", err)
			}
			return []identity.AuditRecord{done(identity.AuditExport, export, changes{"users": after(float64(1))})}
		}},
		{"ExportUsersJSONLines", nil, func(e *auditEnv) []identity.AuditRecord {
			var out bytes.Buffer
			if n, err := e.ws.ExportUsersJSONLines(e.actx, &out); err != nil || n != 1 {
				e.t.Fatalf("ExportUsersJSONLines = %d, %v", n, err)
			}
			return []identity.AuditRecord{done(identity.AuditExport, export, changes{"users": after(float64(1))})}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newAuditEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			e.clock.Advance(time.Second)
			since := e.clock.Now()
			want := tt.run(e)
			if diff := cmp.Diff(want, e.trail(since), ignoreIDAndTime, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// errInjected is the failure auditFailStore injects.
var errInjected = errors.New("injected write failure")

// auditFailStore is a Store whose write transactions fail one chosen Tx
// method: the audit record's write (PutAuditRecord) or one of the
// change's.
type auditFailStore struct {
	store.Store
	mu   sync.Mutex
	fail string // the Tx method that fails; "" for none
}

func (s *auditFailStore) failing(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = method
}

func (s *auditFailStore) err(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == method {
		return errInjected
	}
	return nil
}

func (s *auditFailStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(&auditFailTx{Tx: tx, s: s}) })
}

type auditFailTx struct {
	store.Tx
	s *auditFailStore
}

func (tx *auditFailTx) PutAuditRecord(slug string, r store.AuditRecord) error {
	if err := tx.s.err("PutAuditRecord"); err != nil {
		return err
	}
	return tx.Tx.PutAuditRecord(slug, r)
}

func (tx *auditFailTx) PutUser(slug string, u store.User) error {
	if err := tx.s.err("PutUser"); err != nil {
		return err
	}
	return tx.Tx.PutUser(slug, u)
}

func (tx *auditFailTx) PutUserAttribute(slug string, id int64, key, value string) error {
	if err := tx.s.err("PutUserAttribute"); err != nil {
		return err
	}
	return tx.Tx.PutUserAttribute(slug, id, key, value)
}

func (tx *auditFailTx) PutLoginAttempts(slug string, a store.LoginAttempts) error {
	if err := tx.s.err("PutLoginAttempts"); err != nil {
		return err
	}
	return tx.Tx.PutLoginAttempts(slug, a)
}

func (tx *auditFailTx) PutSession(slug string, s store.Session) error {
	if err := tx.s.err("PutSession"); err != nil {
		return err
	}
	return tx.Tx.PutSession(slug, s)
}

// TestAuditSameTransaction: a record is written in the transaction of
// its change: when the store fails the change, no record is left; when
// the record's write fails, the change fails and nothing of it is left,
// a refused sign-in's count included.
func TestAuditSameTransaction(t *testing.T) {
	type state struct {
		Users, Sessions, Failures int
		Attributes                map[string]string
		Version                   int64
		OldPasswordWorks          bool
	}
	tests := []struct {
		name  string
		fail  string // the Tx method that fails
		setup func(ctx context.Context, ws *identity.Workspace)
		call  func(ctx context.Context, ws *identity.Workspace) error
	}{
		{"CreateUser, the user's write", "PutUser", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.CreateUser(ctx, newUserNamed("bob"))
			return err
		}},
		{"CreateUser, the record's write", "PutAuditRecord", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.CreateUser(ctx, newUserNamed("bob"))
			return err
		}},
		{"SetAttribute, the attribute's write", "PutUserAttribute", nil, func(ctx context.Context, ws *identity.Workspace) error {
			return errOf(ws.SetAttribute(ctx, 1, "dept", "R&D", nil))
		}},
		{"SetAttribute, the user's version", "PutUser", nil, func(ctx context.Context, ws *identity.Workspace) error {
			return errOf(ws.SetAttribute(ctx, 1, "dept", "R&D", nil))
		}},
		{"SetAttribute, the record's write", "PutAuditRecord", nil, func(ctx context.Context, ws *identity.Workspace) error {
			return errOf(ws.SetAttribute(ctx, 1, "dept", "R&D", nil))
		}},
		{"DeleteAttribute, the record's write", "PutAuditRecord", func(ctx context.Context, ws *identity.Workspace) {
			if _, err := ws.SetAttribute(ctx, 1, "dept", "ops", nil); err != nil {
				t.Fatal(err)
			}
		}, func(ctx context.Context, ws *identity.Workspace) error {
			return errOf(ws.DeleteAttribute(ctx, 1, "dept", nil))
		}},
		{"SetPassword, the record's write", "PutAuditRecord", nil, func(ctx context.Context, ws *identity.Workspace) error {
			return ws.SetPassword(ctx, 1, "a brand new passphrase")
		}},
		{"a wrong password, the count's write", "PutLoginAttempts", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.Authenticate(ctx, "ada", "not the password")
			return err
		}},
		{"a wrong password, the record's write", "PutAuditRecord", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.Authenticate(ctx, "ada", "not the password")
			return err
		}},
		{"an unknown login, the record's write", "PutAuditRecord", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.Authenticate(ctx, "nobody", "not the password")
			return err
		}},
		{"a sign-in, the record's write", "PutAuditRecord", func(ctx context.Context, ws *identity.Workspace) {
			if _, err := ws.Authenticate(ctx, "ada", "not the password"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
				t.Fatal(err)
			}
		}, func(ctx context.Context, ws *identity.Workspace) error {
			// The failure counted before stays: the success that would
			// reset it did not commit.
			_, err := ws.Authenticate(ctx, "ada", "correct horse ada")
			return err
		}},
		{"CreateSession, the session's write", "PutSession", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.CreateSession(ctx, 1, nil)
			return err
		}},
		{"CreateSession, the record's write", "PutAuditRecord", nil, func(ctx context.Context, ws *identity.Workspace) error {
			_, err := ws.CreateSession(ctx, 1, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			st := &auditFailStore{Store: memstore.New()}
			t.Cleanup(func() { st.Close() })
			clock := newFakeClock()
			_, ws := newWorkspace(t, st, clock, nil)
			mustCreateUser(t, ws, "ada") // password "correct horse ada"
			if tt.setup != nil {
				tt.setup(ctx, ws)
			}
			read := func() state {
				t.Helper()
				users, err := ws.ListUsers(ctx, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				sessions, err := ws.ListSessions(ctx, 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				attrs, err := ws.ListAttributes(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				var failures int
				err = st.View(ctx, func(tx store.Tx) error {
					a, err := tx.LoginAttempts("acme", 1)
					failures = a.Failures
					if errors.Is(err, store.ErrNotFound) {
						return nil
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return state{Users: users.Total, Sessions: sessions.Total, Failures: failures, Attributes: attrs,
					Version: users.Items[0].Version}
			}
			beforeCall := read()
			clock.Advance(time.Second)
			since := clock.Now()
			st.failing(tt.fail)
			err := tt.call(ctx, ws)
			st.failing("")
			if identity.ErrorCode(err) != identity.CodeInternal || !errors.Is(err, errInjected) {
				t.Fatalf("err = %v (code %q), want CodeInternal caused by the injected failure", err, identity.ErrorCode(err))
			}
			if diff := cmp.Diff(beforeCall, read()); diff != "" {
				t.Errorf("what the call changed, though it failed (-before +after):\n%s", diff)
			}
			page, err := ws.ListAuditRecords(ctx, &identity.AuditFilter{Since: since}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Records) != 0 {
				t.Errorf("records of the failed call: %+v, want none", page.Records)
			}
		})
	}
}

// TestAuditRedactsAttributeSecrets: the redaction rule, through the one
// exported way to name a field at will: an attribute whose key names a
// secret keeps "[redacted]" in its record, before and after; any other
// keeps its values.
func TestAuditRedactsAttributeSecrets(t *testing.T) {
	e := newAuditEnv(t)
	tests := []struct {
		key  string
		want identity.AuditChange // of a value changed from "old" to "new"
	}{
		{"password", changed("[redacted]", "[redacted]")},
		{"passwordHash", changed("[redacted]", "[redacted]")},
		{"newPassword", changed("[redacted]", "[redacted]")},
		{"secret", changed("[redacted]", "[redacted]")},
		{"clientSecret", changed("[redacted]", "[redacted]")},
		{"keyHash", changed("[redacted]", "[redacted]")},
		{"token", changed("[redacted]", "[redacted]")},
		{"refreshToken", changed("[redacted]", "[redacted]")},
		{"accessToken", changed("[redacted]", "[redacted]")},
		{"idToken", changed("[redacted]", "[redacted]")},
		{"code", changed("[redacted]", "[redacted]")},
		{"otp", changed("[redacted]", "[redacted]")},
		{"totpSecret", changed("[redacted]", "[redacted]")},
		{"recoveryCodes", changed("[redacted]", "[redacted]")},
		{"privateKey", changed("[redacted]", "[redacted]")},
		{"API_TOKEN", changed("[redacted]", "[redacted]")},
		{"vendor.Password", changed("[redacted]", "[redacted]")},
		{"email", changed("old", "new")},
		{"fullName", changed("old", "new")},
		{"enabled", changed("old", "new")},
		{"attributes.department", changed("old", "new")},
		{"role", changed("old", "new")},
		{"barcode", changed("old", "new")},
		{"code.region", changed("old", "new")},
	}
	for _, tt := range tests {
		e.attr(e.ada.ID, tt.key, "old")
		e.clock.Advance(time.Second)
		since := e.clock.Now()
		if _, err := e.ws.SetAttribute(e.actx, e.ada.ID, tt.key, "new", nil); err != nil {
			t.Fatal(err)
		}
		want := []identity.AuditRecord{done(identity.AuditUserAttributeSet, adaTarget, changes{"attributes." + tt.key: tt.want})}
		if diff := cmp.Diff(want, e.trail(since), ignoreIDAndTime); diff != "" {
			t.Errorf("SetAttribute(%q) record (-want +got):\n%s", tt.key, diff)
		}
	}
}

// TestAttributesChangeTheUser: an attribute is part of its user: setting
// one to a new value or deleting it moves the user's UpdatedAt to the
// change's time, gives it a new version and emits
// user.attributes.changed (the key and whether it is set, never the
// value); setting one to its value changes nothing.
func TestAttributesChangeTheUser(t *testing.T) {
	e := newTestEnv(t, nil)
	hook := e.hook(identity.EventUserAttributesChanged)
	steps := []struct {
		name  string
		write func() error
		moves bool
	}{
		{"set", func() error { return errOf(e.ws.SetAttribute(e.ctx, e.ada.ID, "dept", "R&D", nil)) }, true},
		{"set to its value", func() error { return errOf(e.ws.SetAttribute(e.ctx, e.ada.ID, "dept", "R&D", nil)) }, false},
		{"set to another", func() error { return errOf(e.ws.SetAttribute(e.ctx, e.ada.ID, "dept", "Mathematics", nil)) }, true},
		{"delete", func() error { return errOf(e.ws.DeleteAttribute(e.ctx, e.ada.ID, "dept", nil)) }, true},
	}
	prev := e.ada
	for i, s := range steps {
		e.clock.Advance(time.Minute)
		if err := s.write(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		u, err := e.ws.GetUser(e.ctx, e.ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantAt := prev.UpdatedAt
		if s.moves {
			wantAt = t0.Add(time.Duration(i+1) * time.Minute)
		}
		if !u.UpdatedAt.Equal(wantAt) || (u.Version != prev.Version) != s.moves {
			t.Errorf("%s: UpdatedAt %v, version %d (before %d); want UpdatedAt %v and a new version %v",
				s.name, u.UpdatedAt, u.Version, prev.Version, wantAt, s.moves)
		}
		prev = u
	}
	var events []string
	for _, p := range e.payloads(hook) {
		events = append(events, typeAndData(t, p))
	}
	want := []string{
		`{"type":"user.attributes.changed","data":{"userId":1,"key":"dept","set":true}}`,
		`{"type":"user.attributes.changed","data":{"userId":1,"key":"dept","set":true}}`,
		`{"type":"user.attributes.changed","data":{"userId":1,"key":"dept","set":false}}`,
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestUserActor: UserActor names a user as the library names the actor of
// the user's own sign-in.
func TestUserActor(t *testing.T) {
	e := newAuditEnv(t)
	if diff := cmp.Diff(identity.Actor{Kind: "user", ID: "1", Display: "ada"}, identity.UserActor(e.ada)); diff != "" {
		t.Errorf("UserActor(ada) (-want +got):\n%s", diff)
	}
	since := e.clock.Now()
	if _, err := e.ws.Login(e.ctx, "ada", adaPassword); err != nil {
		t.Fatal(err)
	}
	var actors []identity.Actor
	for _, r := range e.trail(since) {
		if r.Action == identity.AuditSignInSucceeded {
			actors = append(actors, r.Actor)
		}
	}
	if diff := cmp.Diff([]identity.Actor{identity.UserActor(e.ada)}, actors); diff != "" {
		t.Errorf("actor of the sign-in (-want +got):\n%s", diff)
	}
}
