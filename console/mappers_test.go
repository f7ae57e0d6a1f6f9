package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

func init() {
	csrfRows["workspaces/{slug}/mappers"] = struct {
		path string
		form url.Values
	}{"workspaces/acme/mappers", url.Values{"attributeKey": {"forged"}, "claimName": {"forged"}}}
	csrfRows["workspaces/{slug}/mappers/edit"] = struct {
		path string
		form url.Values
	}{"workspaces/acme/mappers/edit", url.Values{"key": {"dept"}, "version": {"1"}, "claimName": {"forged"}}}
	csrfRows["workspaces/{slug}/mappers/delete"] = struct {
		path string
		form url.Values
	}{"workspaces/acme/mappers/delete", url.Values{"key": {"dept"}}}
}

// TestMappersPages: create with the reserved-name, taken-name and limit
// errors next to their inputs, edit conditional on the version shown,
// delete behind a confirmation; keys any character but NUL travel
// intact.
func TestMappersPages(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	ctx := t.Context()
	admin := e.operator("root", console.RoleAdmin)

	r := admin.post(e.url("workspaces/acme/mappers"), url.Values{"attributeKey": {"dept"}, "claimName": {"SUB"}, "includeInAccess": {"on"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="claimName-error">claim name &#34;SUB&#34; is reserved<`) ||
		!strings.Contains(r.body, `value="SUB"`) || !strings.Contains(r.body, `value="dept"`) {
		t.Errorf("reserved name: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/mappers"), url.Values{"attributeKey": {"dept"}, "claimName": {"department"}, "includeInId": {"on"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", r.status, r.body)
	}
	hostile := `a/../<script>x</script>?&"`
	if _, err := ws.SetClaimMapper(ctx, hostile, identity.ClaimMapperSpec{ClaimName: "odd"}); err != nil {
		t.Fatal(err)
	}
	r = admin.post(e.url("workspaces/acme/mappers"), url.Values{"attributeKey": {"team"}, "claimName": {"department"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, `id="claimName-error">claim name &#34;department&#34; is already used`) {
		t.Errorf("taken name: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/mappers"), url.Values{"attributeKey": {"dept"}, "claimName": {"other"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, `id="attributeKey-error">has a mapper already<`) {
		t.Errorf("existing mapper: %d\n%s", r.status, r.body)
	}
	got, err := ws.GetClaimMapper(ctx, "dept")
	if err != nil {
		t.Fatal(err)
	}
	if want := (identity.ClaimMapper{AttributeKey: "dept", ClaimName: "department", IncludeInAccess: false, IncludeInID: true, Version: got.Version}); got != want {
		t.Errorf("created %+v, want %+v", got, want)
	}
	r = admin.get(e.url("workspaces/acme/mappers"))
	if !strings.Contains(r.body, "Mappers 1–2 of 2 (at most 20)") || strings.Contains(r.body, "<script>x") ||
		!strings.Contains(r.body, `<code>a/../&lt;script&gt;x&lt;/script&gt;?&amp;&#34;</code>`) {
		t.Errorf("list:\n%s", r.body)
	}

	// Editing the hostile key's mapper: the key travels in the query.
	edit := "workspaces/acme/mappers/edit?" + url.Values{"key": {hostile}}.Encode()
	if !strings.Contains(r.body, `href="`+strings.ReplaceAll(e.base+edit, "&", "&amp;")+`"`) {
		t.Errorf("no edit link to %s", edit)
	}
	r = admin.get(e.url(edit))
	if r.status != http.StatusOK || !strings.Contains(r.body, `value="odd"`) {
		t.Fatalf("edit page: %d\n%s", r.status, r.body)
	}
	m, _ := ws.GetClaimMapper(ctx, hostile)
	r = admin.post(e.url("workspaces/acme/mappers/edit"), url.Values{"key": {hostile}, "version": {fmt.Sprint(m.Version)}, "claimName": {"exp"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="claimName-error">claim name &#34;exp&#34; is reserved<`) {
		t.Errorf("edit to a reserved name: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/mappers/edit"), url.Values{"key": {hostile}, "version": {fmt.Sprint(m.Version)}, "claimName": {"odd2"}, "includeInId": {"on"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", r.status, r.body)
	}
	if m2, _ := ws.GetClaimMapper(ctx, hostile); m2.ClaimName != "odd2" || m2.IncludeInAccess || !m2.IncludeInID {
		t.Errorf("edited: %+v", m2)
	}
	// The version shown is stale now: the edit is refused.
	r = admin.post(e.url("workspaces/acme/mappers/edit"), url.Values{"key": {hostile}, "version": {fmt.Sprint(m.Version)}, "claimName": {"odd3"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, "Someone changed it") {
		t.Errorf("stale edit: %d\n%s", r.status, r.body)
	}

	// The limit, at the new mapper's attribute.
	for i := range identity.MaxClaimMappers - 2 {
		if _, err := ws.SetClaimMapper(ctx, fmt.Sprintf("k%d", i), identity.ClaimMapperSpec{ClaimName: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	r = admin.post(e.url("workspaces/acme/mappers"), url.Values{"attributeKey": {"one-more"}, "claimName": {"more"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="attributeKey-error">the workspace already has the maximum of 20 claim mappers<`) {
		t.Errorf("past the limit: %d\n%s", r.status, r.body)
	}

	// Deleting.
	del := "workspaces/acme/mappers/delete?" + url.Values{"key": {hostile}}.Encode()
	if r := admin.get(e.url(del)); r.status != http.StatusOK || !strings.Contains(r.body, `name="key" value="a/../&lt;script&gt;x&lt;/script&gt;?&amp;&#34;"`) {
		t.Errorf("confirm: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/mappers/delete"), url.Values{"key": {hostile}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("delete: %d", r.status)
	}
	if r := admin.get(e.url(strings.TrimPrefix(r.location(), e.base))); !strings.Contains(r.body, "is deleted.") {
		t.Errorf("no notice:\n%s", r.body)
	}
	if _, err := ws.GetClaimMapper(ctx, hostile); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("after delete: %v", err)
	}
	if r := admin.get(e.url("workspaces/acme/mappers?deleted=dept")); strings.Contains(r.body, "is deleted") {
		t.Error("a link made the page claim a deletion")
	}
	if r := admin.get(e.url("workspaces/acme/mappers/edit?key=nonesuch")); r.status != http.StatusNotFound {
		t.Errorf("unknown mapper: %d", r.status)
	}
}

// TestMappersViewer: a viewer reads the mappers with no form that writes,
// and a write is refused.
func TestMappersViewer(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	if _, err := ws.SetClaimMapper(t.Context(), "dept", identity.ClaimMapperSpec{ClaimName: "department"}); err != nil {
		t.Fatal(err)
	}
	viewer := e.operator("watcher", console.RoleViewer)
	for _, p := range []string{"workspaces/acme/mappers", "workspaces/acme/mappers/edit?key=dept"} {
		r := viewer.get(e.url(p))
		if r.status != http.StatusOK || strings.Count(r.body, `method="post"`) != 1 || strings.Contains(r.body, "Delete") || strings.Contains(r.body, "Create") {
			t.Errorf("%s: %d\n%s", p, r.status, r.body)
		}
	}
	if r := viewer.post(e.url("workspaces/acme/mappers/delete"), url.Values{"key": {"dept"}}); r.status != http.StatusForbidden {
		t.Errorf("viewer deleting: %d", r.status)
	}
	page, err := ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditMapperDeleted)}, nil)
	if err != nil || len(page.Records) != 0 {
		t.Errorf("deletions: %+v %v", page.Records, err)
	}
	got, _ := ws.ListClaimMappers(t.Context())
	if diff := cmp.Diff([]string{"dept"}, keysOf(got)); diff != "" {
		t.Errorf("mappers (-want +got):\n%s", diff)
	}
}

func keysOf(ms []identity.ClaimMapper) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.AttributeKey)
	}
	return out
}
