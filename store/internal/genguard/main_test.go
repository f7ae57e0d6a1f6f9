package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuardUpToDate checks that store/guard.go is what genguard writes
// from the store package as it is now.
func TestGuardUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..")
	want, err := generateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("store/guard.go is stale: run go generate ./store")
	}
}

// generateSrc runs generate over one file of source.
func generateSrc(t *testing.T, src string) ([]byte, error) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "store.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return generate(fset, []*ast.File{f})
}

// TestGenerate checks the forwarding of a small package: the guard each
// marker asks for, a check function, zero values and a parameter named
// like the receiver.
func TestGenerate(t *testing.T) {
	src := `package store

import "time"

type Rec struct{}

type Kind string

type Tx interface {
	PutRec(slug string, g Rec) error //guard:write
	Rec(slug string) (Rec, Kind, time.Time, []int, error) //guard:read
}

type Bulk interface {
	Many(ids ...int64) error //guard:read
}

func checkPutRec(string, Rec) error { return nil }
`
	got, err := generateSrc(t, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func (g *guarded) PutRec(slug string, arg1 Rec) error {\n\tif err := g.write(); err != nil {\n\t\treturn err\n\t}\n" +
			"\tif err := checkPutRec(slug, arg1); err != nil {\n\t\treturn err\n\t}\n\treturn g.tx.PutRec(slug, arg1)\n}",
		"\tif err := g.read(); err != nil {\n\t\treturn Rec{}, \"\", time.Time{}, nil, err\n\t}",
		"func (g *bulkGuarded) Many(ids ...int64) error {",
		"return g.bulk.Many(ids...)",
		"import \"time\"",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the output lacks\n%s\nin\n%s", want, got)
		}
	}
}

// TestGenerateRefuses checks that the generator stops, rather than
// guess, on a method it cannot classify or forward and on a check
// function that would be lost.
func TestGenerateRefuses(t *testing.T) {
	for _, c := range []struct {
		name, decls, want string
	}{
		{"no marker", "type Tx interface {\n\tM() error\n}", "want exactly one"},
		{"a marker in the doc comment", "type Tx interface {\n\t//guard:read\n\tM() error\n}", "want exactly one"},
		{"a marker with more text", "type Tx interface {\n\tM() error //guard:read, mostly\n}", "want exactly one"},
		{"a put marked read", "type Tx interface {\n\tPutX() error //guard:read\n}", "a method named Put... writes"},
		{"no error", "type Tx interface {\n\tM() int //guard:read\n}", "does not return an error last"},
		{"a check of no method", "type Tx interface {\n\tPutX() error //guard:write\n}\nfunc checkPutY() error { return nil }",
			"checkPutY checks no method"},
		{"a check with other parameters", "type Tx interface {\n\tPutX(id int64) error //guard:write\n}\nfunc checkPutX(id int) error { return nil }",
			"must take the parameters of PutX (int64)"},
		{"an unknown zero value", "import \"net/netip\"\ntype Tx interface {\n\tM() (netip.Addr, error) //guard:read\n}",
			"the zero value of netip.Addr is unknown"},
	} {
		src := "package store\n\n" + c.decls + "\n\ntype Bulk interface{}\n"
		_, err := generateSrc(t, src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error = %v, want one containing %q", c.name, err, c.want)
		}
	}
}
