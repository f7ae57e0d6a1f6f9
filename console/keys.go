package console

import (
	"net/http"
	"net/url"

	"github.com/identitylib/identity"
)

// signingKeysData is the data of the page of a workspace's signing keys.
type signingKeysData struct {
	Slug string
	Keys []identity.SigningKey
}

// serveSigningKeys lists the workspace's published signing keys: their
// state, and until when a retired one stays published.
func (h *Handler) serveSigningKeys(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	keys, err := ws.ListSigningKeys(rq.ctx)
	if err != nil {
		return err
	}
	v := &view{Title: "Signing keys", Workspace: ws.Slug(), Data: signingKeysData{Slug: ws.Slug(), Keys: keys}}
	// The notice says only what is true now: the key named is the
	// active one.
	if kid := rq.r.URL.Query().Get("rotated"); kid != "" {
		for _, k := range keys {
			if k.ID == kid && k.State == identity.KeyActive {
				v.Notice = "Keys rotated: " + kid + " signs from now on."
			}
		}
	}
	h.render(rq, http.StatusOK, "keys", v)
	return nil
}

// serveRotateSigningKey asks to confirm a rotation.
func (h *Handler) serveRotateSigningKey(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	keys, err := ws.ListSigningKeys(rq.ctx)
	if err != nil {
		return err
	}
	h.render(rq, http.StatusOK, "keys-rotate", &view{Title: "Rotate the signing keys", Workspace: ws.Slug(),
		Data: signingKeysData{Slug: ws.Slug(), Keys: keys}})
	return nil
}

// rotateSigningKey rotates the workspace's keys at once.
func (h *Handler) rotateSigningKey(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	k, err := ws.RotateSigningKey(rq.ctx)
	if err != nil {
		return err
	}
	redirect(rq, h.href("workspaces", ws.Slug(), "keys"), url.Values{"rotated": {k.ID}})
	return nil
}
