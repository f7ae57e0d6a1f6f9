package console

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/identitylib/identity"
)

// clientsData is the data of the page of a workspace's API keys and
// OAuth clients: two lists, each paged by its own query parameter
// ("keys" and "clients").
type clientsData struct {
	Slug       string
	Keys       []identity.APIKey
	KeysPager  listPager
	Clients    []identity.OAuthClient
	ClientPage listPager
	// The choices of the creation forms.
	Scopes       []identity.Scope
	GrantTypes   []identity.GrantType
	AccessClaims []string
	// Form says which form was sent back with its errors: "apikey" or
	// "client".
	Form string
}

// clientsView returns the page of the workspace's keys and clients at
// the query's offsets.
func (h *Handler) clientsView(rq *request, ws *identity.Workspace) (*view, error) {
	keys, err := ws.ListAPIKeys(rq.ctx)
	if err != nil {
		return nil, err
	}
	clients, err := ws.ListClients(rq.ctx)
	if err != nil {
		return nil, err
	}
	path := h.href("workspaces", ws.Slug(), "clients")
	ko, keyTotal := min(queryOffset(rq, "keys"), len(keys)), len(keys)
	keys = keys[ko:min(ko+pageSize, len(keys))]
	co := min(queryOffset(rq, "clients"), len(clients))
	total := len(clients)
	clients = clients[co:min(co+pageSize, len(clients))]
	d := clientsData{
		Slug: ws.Slug(), Keys: keys, Clients: clients,
		Scopes: identity.Scopes(), GrantTypes: identity.GrantTypes(), AccessClaims: identity.AccessClaims(),
	}
	d.KeysPager = newListPager(rq, path, "keys", ko, len(keys), keyTotal)
	d.ClientPage = newListPager(rq, path, "clients", co, len(clients), total)
	return &view{Title: "API keys & clients", Workspace: ws.Slug(), Data: d}, nil
}

// serveClients lists the workspace's API keys and OAuth clients, with
// the forms that create them.
func (h *Handler) serveClients(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	v, err := h.clientsView(rq, ws)
	if err != nil {
		return err
	}
	// Notices say only what is true now.
	q := rq.r.URL.Query()
	if id := q.Get("revoked"); validKeyID(id) {
		keys, err := ws.ListAPIKeys(rq.ctx)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(keys, func(k identity.APIKey) bool { return k.ID == id }) {
			v.Notice = "API key " + id + " revoked."
		}
	}
	if id := q.Get("deleted"); id != "" && validClientID(id) {
		if _, err := ws.GetClient(rq.ctx, id); identity.ErrorCode(err) == identity.CodeNotFound {
			v.Notice = "OAuth client " + id + " deleted."
		}
	}
	h.render(rq, http.StatusOK, "clients", v)
	return nil
}

// validKeyID reports whether s is shaped like an API key's id: 16
// lowercase hex digits.
func validKeyID(s string) bool { return len(s) == 16 && isLowerHex(s) }

// validClientID reports whether s is shaped like an OAuth client's id:
// "idc_" and 16 lowercase hex digits.
func validClientID(s string) bool {
	return len(s) == 20 && s[:4] == "idc_" && isLowerHex(s[4:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// secretCreatedData is the data of the page that shows a new API key or
// client secret, the one time it is shown.
type secretCreatedData struct {
	Slug string
	// Key is the new API key, or Client the new OAuth client.
	Key    *identity.APIKey
	Client *identity.OAuthClient
	Secret string
}

// createAPIKey issues an API key and shows it once.
func (h *Handler) createAPIKey(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	var scopes []identity.Scope
	for _, s := range rq.r.PostForm["scopes"] {
		scopes = append(scopes, identity.Scope(s))
	}
	created, err := ws.CreateAPIKey(rq.ctx, rq.r.PostFormValue("name"), scopes)
	if err != nil {
		v, verr := h.clientsView(rq, ws)
		if verr != nil {
			return verr
		}
		d := v.Data.(clientsData)
		d.Form = "apikey"
		v.Data = d
		h.refuseForm(rq, "clients", v, err)
		return nil
	}
	h.render(rq, http.StatusOK, "secret-created", &view{
		Title: "API key created", Workspace: ws.Slug(),
		Data: secretCreatedData{Slug: ws.Slug(), Key: &created.APIKey, Secret: created.Secret},
	})
	return nil
}

// apiKeyData is the data of the page that confirms a key's revocation.
type apiKeyData struct {
	Slug string
	Key  identity.APIKey
}

// pathAPIKey returns the workspace and its API key named by the path.
func (h *Handler) pathAPIKey(rq *request) (*identity.Workspace, identity.APIKey, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, identity.APIKey{}, err
	}
	keys, err := ws.ListAPIKeys(rq.ctx)
	if err != nil {
		return nil, identity.APIKey{}, err
	}
	i := slices.IndexFunc(keys, func(k identity.APIKey) bool { return k.ID == rq.r.PathValue("id") })
	if i < 0 {
		return nil, identity.APIKey{}, errNotFound
	}
	return ws, keys[i], nil
}

// serveRevokeAPIKey asks to confirm a key's revocation.
func (h *Handler) serveRevokeAPIKey(rq *request) error {
	ws, key, err := h.pathAPIKey(rq)
	if err != nil {
		return err
	}
	h.render(rq, http.StatusOK, "apikey-revoke", &view{Title: "Revoke API key " + key.ID, Workspace: ws.Slug(),
		Data: apiKeyData{Slug: ws.Slug(), Key: key}})
	return nil
}

// revokeAPIKey revokes a key: it stops working at once.
func (h *Handler) revokeAPIKey(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	id := rq.r.PathValue("id")
	if err := ws.RevokeAPIKey(rq.ctx, id); err != nil {
		return err
	}
	redirect(rq, h.href("workspaces", ws.Slug(), "clients"), url.Values{"revoked": {id}})
	return nil
}

// createClient registers an OAuth client and shows its secret once (a
// public client has none).
func (h *Handler) createClient(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	f := rq.r.PostForm
	nc := identity.NewClient{
		Name: f.Get("name"), Public: f.Get("type") == "public",
		RedirectURIs:           formLines(f.Get("redirectUris")),
		PostLogoutRedirectURIs: formLines(f.Get("postLogoutRedirectUris")),
		Claims:                 f["claims"],
	}
	for _, g := range f["grantTypes"] {
		nc.GrantTypes = append(nc.GrantTypes, identity.GrantType(g))
	}
	created, err := ws.CreateClient(rq.ctx, nc)
	if err != nil {
		v, verr := h.clientsView(rq, ws)
		if verr != nil {
			return verr
		}
		d := v.Data.(clientsData)
		d.Form = "client"
		v.Data = d
		h.refuseForm(rq, "clients", v, err, "redirectUris", "postLogoutRedirectUris")
		return nil
	}
	h.render(rq, http.StatusOK, "secret-created", &view{
		Title: "OAuth client created", Workspace: ws.Slug(),
		Data: secretCreatedData{Slug: ws.Slug(), Client: &created.Client, Secret: created.Secret},
	})
	return nil
}

// clientData is the data of an OAuth client's page.
type clientData struct {
	Slug   string
	Client identity.OAuthClient
}

// pathClient returns the workspace and its OAuth client named by the
// path.
func (h *Handler) pathClient(rq *request) (*identity.Workspace, identity.OAuthClient, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, identity.OAuthClient{}, err
	}
	c, err := ws.GetClient(rq.ctx, rq.r.PathValue("id"))
	if err != nil {
		return nil, identity.OAuthClient{}, err
	}
	return ws, c, nil
}

// serveClient shows an OAuth client.
func (h *Handler) serveClient(rq *request) error {
	ws, c, err := h.pathClient(rq)
	if err != nil {
		return err
	}
	title := "OAuth client " + c.ID
	h.render(rq, http.StatusOK, "client", &view{Title: title, Workspace: ws.Slug(), Data: clientData{Slug: ws.Slug(), Client: c}})
	return nil
}

// serveDeleteClient asks to confirm a client's deletion.
func (h *Handler) serveDeleteClient(rq *request) error {
	ws, c, err := h.pathClient(rq)
	if err != nil {
		return err
	}
	h.render(rq, http.StatusOK, "client-delete", &view{Title: "Delete OAuth client " + c.ID, Workspace: ws.Slug(),
		Data: clientData{Slug: ws.Slug(), Client: c}})
	return nil
}

// deleteClient deletes an OAuth client: its secret stops working at once.
func (h *Handler) deleteClient(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	id := rq.r.PathValue("id")
	if err := ws.DeleteClient(rq.ctx, id); err != nil {
		return err
	}
	redirect(rq, h.href("workspaces", ws.Slug(), "clients"), url.Values{"deleted": {id}})
	return nil
}
