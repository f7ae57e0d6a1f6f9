package console_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/jws"
)

// benchUsersDB, when set, is a bbolt file that the root package's
// benchmarks built (their workspace "bench", users user0000001...): the
// users benchmarks then run over it too. The console writes to it (the
// operator workspace, an operator and their session): give it a copy.
var benchUsersDB = flag.String("console.bench.db", "", "a copy of a root benchmark database (users-v3-N.db) to run the users pages over")

// consoleBench is a console over a bbolt file with an operator signed in.
type consoleBench struct {
	h      *console.Handler
	cookie *http.Cookie
	// slug is the workspace of the users.
	slug string
	// path is the bbolt file.
	path string
}

// newConsoleBench opens path (a new file is filled with n users like the
// root benchmarks' in workspace "bench") and signs an operator in.
func newConsoleBench(b *testing.B, path string, n int) *consoleBench {
	b.Helper()
	ctx := context.Background()
	svc, err := identity.Open(path, &identity.Options{IssuerBase: "https://id.example", TokenSigner: jws.Signer{},
		SigningAlgorithm: identity.ES256})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ws, err := svc.GetWorkspace(ctx, "bench")
	if identity.ErrorCode(err) == identity.CodeNotFound {
		ws, err = svc.CreateWorkspace(ctx, "bench", nil)
		if err != nil {
			b.Fatal(err)
		}
		fillBench(b, ws, n)
	} else if err != nil {
		b.Fatal(err)
	}
	h, err := console.New(svc, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Prepare(ctx); err != nil {
		b.Fatal(err)
	}
	ops, err := svc.GetWorkspace(ctx, console.DefaultOperatorWorkspace)
	if err != nil {
		b.Fatal(err)
	}
	op, err := ops.ListUsers(ctx, "bench-operator", nil)
	if err != nil {
		b.Fatal(err)
	}
	var opID int64
	if len(op.Items) == 1 {
		opID = op.Items[0].ID
	} else {
		u, err := ops.ImportUsers(ctx, []identity.ImportedUser{{Username: "bench-operator", Email: "bench-operator@example.com",
			FullName: "Bench Operator", Roles: []identity.RoleRef{identity.RoleName(console.RoleAdmin)}}})
		if err != nil {
			b.Fatal(err)
		}
		opID = u[0].ID
	}
	s, err := ops.CreateSession(ctx, opID, nil)
	if err != nil {
		b.Fatal(err)
	}
	return &consoleBench{h: h, cookie: &http.Cookie{Name: "identity_console", Value: s.Secret}, slug: "bench", path: path}
}

// fillBench imports n users shaped like the root benchmarks' (usernames
// user0000001..., full names by id, three attributes; user 1 in ten
// groups, each carrying a role).
func fillBench(b *testing.B, ws *identity.Workspace, n int) {
	ctx := context.Background()
	first := []string{"Ada", "Ben", "Cara", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivan", "Jo", "Kara", "Liam", "Mia",
		"Noor", "Omar", "Pia", "Quinn", "Ravi", "Sara", "Tom", "Uma", "Vik", "Wen", "Xia", "Yara", "Zoe"}
	last := []string{"Lee", "Kim", "Diaz", "Shah", "Berg", "Moss", "Cole", "Ruiz", "Wu", "Otto"}
	for t := range 10 {
		g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: fmt.Sprintf("team-%d", t)})
		if err != nil {
			b.Fatal(err)
		}
		r, err := ws.CreateRole(ctx, identity.NewRole{Name: fmt.Sprintf("team-role-%d", t)})
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.AssignGroupRole(ctx, g.ID, r.ID); err != nil {
			b.Fatal(err)
		}
	}
	var batch []identity.ImportedUser
	for i := 1; i <= n; i++ {
		f, l := first[i%26], last[i/26%10]
		u := identity.ImportedUser{Username: fmt.Sprintf("user%07d", i), FullName: f + " " + l,
			Email:      fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(f), strings.ToLower(l), i),
			Attributes: map[string]string{"department": fmt.Sprintf("dept%d", i%50), "tier": "gold", "employee_id": fmt.Sprint(i)}}
		if i == 1 {
			for t := range 10 {
				u.Groups = append(u.Groups, fmt.Sprintf("team-%d", t))
			}
		}
		batch = append(batch, u)
		if len(batch) == identity.MaxImportBatch || i == n {
			if _, err := ws.ImportUsers(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// cpuTime returns the CPU time the process has used, user and system:
// on a machine that other jobs share, a request's CPU time varies less
// than its wall time, which waits for a core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveCold measures GETs of the console's path with the file dropped
// from memory before each (see evictFile), the timer stopped meanwhile:
// every page of the file the request reads comes from the disk. It
// reports the process's CPU time and its major page faults (reads of the
// file from the disk, each of one page or more with the kernel's
// read-ahead) per request.
func (cb *consoleBench) serveCold(b *testing.B, path string) {
	if !coldSupported {
		b.Skip("cold reads need Linux")
	}
	var cpu time.Duration
	var faults int64
	for b.Loop() {
		b.StopTimer()
		if _, err := evictFile(cb.path); err != nil {
			b.Fatal(err)
		}
		cpu0 := cpuTime(b)
		f0, err := pageFaults()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cb.serve(b, path)
		b.StopTimer()
		f1, err := pageFaults()
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime(b) - cpu0
		faults += f1 - f0
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(faults)/float64(b.N), "major-faults/op")
}

// serve answers one GET of the console's path and checks its status.
func (cb *consoleBench) serve(b *testing.B, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/console/"+path, nil)
	req.AddCookie(cb.cookie)
	w := httptest.NewRecorder()
	cb.h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d: %s", path, w.Code, w.Body.String())
	}
	return w
}

// BenchmarkUsersPages measures the server time of the users pages (the
// handler's ServeHTTP, with the session check, the library's reads and
// the template, without the network) over a bbolt file of 100,000 users,
// warm and cold (each page also as NAME/cold, the file dropped from
// memory before each request), and over -console.bench.db when given;
// cpu-ns/op is the process's CPU time per request:
//
//	go test -run '^$' -bench UsersPages -benchtime 2s ./console/
//	go test -run '^$' -bench UsersPages -benchtime 2s ./console/ -args -console.bench.db /var/tmp/copy/users-v3-10000000.db
func BenchmarkUsersPages(b *testing.B) {
	type target struct {
		name string
		open func(b *testing.B) *consoleBench
	}
	targets := []target{{"users=100000", func(b *testing.B) *consoleBench {
		return newConsoleBench(b, filepath.Join(b.TempDir(), "bench.db"), 100_000)
	}}}
	if *benchUsersDB != "" {
		targets = append(targets, target{"db=" + filepath.Base(*benchUsersDB), func(b *testing.B) *consoleBench {
			return newConsoleBench(b, *benchUsersDB, 0)
		}})
	}
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) {
			cb := tg.open(b)
			pages := []struct{ name, path, has string }{
				// The first page of a search of a 26th of the users, with
				// the total.
				{"search-k", "workspaces/bench/users?q=k", "Users 1–50 of"},
				// A search that narrows to ten users, as typed further.
				{"search-user000001", "workspaces/bench/users?q=user000001", "Users 1–10 of 10"},
				// The list without a search.
				{"list", "workspaces/bench/users", "Users 1–50 of"},
				// A state filter: a scan of 1,000 users.
				{"filter-disabled", "workspaces/bench/users?disabled=1", "examined"},
				// The user page of user 1: ten groups carrying ten roles,
				// three attributes, the claims preview, the trail.
				{"user", "workspaces/bench/users/1", "team-role-9"},
			}
			for _, p := range pages {
				b.Run(p.name, func(b *testing.B) {
					if w := cb.serve(b, p.path); !strings.Contains(w.Body.String(), p.has) {
						b.Fatalf("GET %s: no %q", p.path, p.has)
					}
					cpu0 := cpuTime(b)
					for b.Loop() {
						cb.serve(b, p.path)
					}
					b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
				})
				b.Run(p.name+"/cold", func(b *testing.B) { cb.serveCold(b, p.path) })
			}
		})
	}
}
