package console

import (
	"net/http"
	"strings"

	"github.com/identitylib/identity"
)

// setupData is the data of the account setup page.
type setupData struct {
	Token    string
	Username string
	// ChooseUsername shows the username as a field: the first operator
	// chooses it.
	ChooseUsername bool
	// Done is set once the account is ready.
	Done bool
}

// serveSetup shows the account setup form of a setup link (Invite): no
// session needed, the link's token is the credential.
func (h *Handler) serveSetup(rq *request) error {
	token := rq.r.URL.Query().Get("token")
	ws, err := h.operatorWorkspace(rq.ctx)
	if err != nil {
		return err
	}
	pending, err := ws.CheckAccountSetup(rq.ctx, token)
	if err != nil {
		return err
	}
	u := pending.User
	v := &view{Title: "Set up your operator account", Form: map[string][]string{},
		Data: setupData{Token: token, Username: u.Username, ChooseUsername: pending.ChooseUsername}}
	if !strings.HasSuffix(u.Email, pendingEmailDomain) {
		v.Form.Set("email", u.Email)
	}
	v.Form.Set("username", u.Username)
	v.Form.Set("fullName", u.FullName)
	h.render(rq, http.StatusOK, "setup", v)
	return nil
}

// completeSetup completes an account setup (Workspace.
// CompleteAccountSetup). The form's token is the link's: it stands for
// the CSRF token, which a page without a session cannot have, and Go's
// cross-origin protection applies as to every POST.
func (h *Handler) completeSetup(rq *request) error {
	f := rq.r.PostForm
	token := f.Get("token")
	ws, err := h.operatorWorkspace(rq.ctx)
	if err != nil {
		return err
	}
	pending, err := ws.CheckAccountSetup(rq.ctx, token)
	if err != nil {
		return err
	}
	v := &view{Title: "Set up your operator account",
		Data: setupData{Token: token, Username: pending.User.Username, ChooseUsername: pending.ChooseUsername}}
	username := ""
	if pending.ChooseUsername {
		username = f.Get("username")
	}
	if f.Get("password") != f.Get("password2") {
		v.Error = "The two passwords differ."
		v.Fields = map[string]string{"password2": "Type the same password twice."}
		v.Form = f
		h.render(rq, http.StatusUnprocessableEntity, "setup", v)
		return nil
	}
	u, err := ws.CompleteAccountSetup(rq.ctx, token, identity.AccountSetupInput{
		Username: username, Email: f.Get("email"), FullName: f.Get("fullName"), Password: f.Get("password"),
	})
	if identity.ErrorCode(err) == identity.CodeInvalid || identity.ErrorCode(err) == identity.CodeConflict {
		h.renderForm(rq, "setup", v, err)
		return nil
	}
	if err != nil {
		return err
	}
	v.Title = "Your account is ready"
	v.Data = setupData{Username: u.Username, Done: true}
	h.render(rq, http.StatusOK, "setup", v)
	return nil
}
