package identity

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/identitylib/identity/store"
)

// Erasure and the audit trail: deleting a user keeps the trail of what
// happened and removes the person from it. Every record that names the
// user (as its target or its actor) keeps the user's id; the names it
// shows (username, email, full name) become one pseudonym, the same in
// every record of the user, so the records still read as one person's;
// the string values of what changed on the user (email, full name,
// attribute values, role and group names) become the pseudonym too; and
// where the user was the actor, the request's address and browser, which
// were theirs, are removed. What others did to the account (a failed
// sign-in's address) stays: it is theirs, not the user's.

// erasedPrefix starts every pseudonym.
const erasedPrefix = "erased-"

// newPseudonym returns a fresh pseudonym: erasedPrefix and 12 random hex
// digits, unrelated to anything of the user.
func newPseudonym() string {
	b := make([]byte, 6)
	rand.Read(b) // never fails (crypto/rand)
	return erasedPrefix + hex.EncodeToString(b)
}

// pseudonymizeAudit rewrites the workspace's records that name the user
// with the pseudonym, in tx (the transaction that deletes the user), and
// returns how many it rewrote. It reads them through the indexes by
// target and by actor, SweepBatch at a time.
func (w *Workspace) pseudonymizeAudit(tx store.Tx, userID int64, pseudonym string) (int, error) {
	id := strconv.FormatInt(userID, 10)
	rewritten := 0
	for _, q := range []store.AuditQuery{
		{TargetKind: TargetUser, TargetID: id},
		{ActorKind: string(ActorUser), ActorID: id},
	} {
		q.Ascending, q.Limit = true, SweepBatch
		for {
			recs, err := tx.AuditRecords(w.slug, q)
			if err != nil {
				return rewritten, err
			}
			for _, r := range recs {
				if q.ActorKind != "" && r.TargetKind == TargetUser && r.TargetID == id {
					continue // the user's own doing to themselves: rewritten by target
				}
				if err := pseudonymize(&r, id, pseudonym); err != nil {
					return rewritten, err
				}
				if err := tx.PutAuditRecord(w.slug, r); err != nil {
					return rewritten, err
				}
				rewritten++
			}
			if len(recs) < q.Limit {
				break
			}
			q.After = recs[len(recs)-1].ID
		}
	}
	return rewritten, nil
}

// pseudonymize removes the user with the id from r (see above).
func pseudonymize(r *store.AuditRecord, userID, pseudonym string) error {
	if r.ActorKind == string(ActorUser) && r.ActorID == userID {
		r.ActorDisplay, r.Address, r.UserAgent = pseudonym, "", ""
	}
	if r.TargetKind != TargetUser || r.TargetID != userID {
		return nil
	}
	r.TargetDisplay = pseudonym
	if len(r.Changes) == 0 {
		return nil
	}
	var changes map[string]AuditChange
	if err := json.Unmarshal(r.Changes, &changes); err != nil {
		return fmt.Errorf("decode audit record %s: %w", r.ID, err)
	}
	for field, c := range changes {
		changes[field] = AuditChange{Before: pseudonymValue(c.Before, pseudonym), After: pseudonymValue(c.After, pseudonym)}
	}
	encoded, err := json.Marshal(changes)
	if err != nil {
		return err
	}
	r.Changes = encoded
	return nil
}

// pseudonymValue returns the pseudonym in place of a string (or a list
// holding strings), and v itself otherwise: a flag or a count says
// nothing of the person.
func pseudonymValue(v any, pseudonym string) any {
	switch v := v.(type) {
	case string:
		if v == Redacted {
			return v
		}
		return pseudonym
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = pseudonymValue(e, pseudonym)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = pseudonymValue(e, pseudonym)
		}
		return out
	}
	return v
}
