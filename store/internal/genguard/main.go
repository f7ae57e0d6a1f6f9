// Command genguard writes store/guard.go, the methods by which the front
// (store.RunView and store.RunUpdate) forwards every method of store.Tx,
// and of store.Bulk, to a store's own transaction. It runs from the store
// package's directory through its go:generate directive:
//
//	go generate ./store
//
// It reads the package's non-test Go files. Each method of the forwarded
// interfaces (and of the interfaces they embed) must carry one of two
// markers as the comment at the end of its line, which say what the front
// checks before it forwards the call:
//
//	PutUser(slug string, u User) error //guard:write
//
//	//guard:read    the transaction has not ended (store.ErrTxDone)
//	//guard:write   that, and it is not a View's (store.ErrReadOnly)
//
// A method without exactly one marker stops the generator: whether a
// method writes is declared where the method is, never guessed. As a
// check on that declaration, a method whose name begins Put, Delete, Add,
// Remove or Insert must be marked write.
//
// After the lifecycle check, a method M calls the package's function
// checkM, when there is one, with M's arguments; a non-nil error from it
// is returned without reaching the store. The check functions are written
// by hand (store/guardchecks.go). A function named check followed by an
// upper-case letter that names no forwarded method, or whose parameters
// are not the method's, stops the generator, so that a check cannot be
// lost to a typo.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// output is the file genguard writes, in the package's directory. It is
// not read as input: it holds nothing the generator needs.
const output = "guard.go"

// forwarded lists, in output order, the interfaces the front forwards:
// the receiver type whose methods forward each, and the field of that
// type that holds the store's implementation.
var forwarded = []struct {
	iface, recv, field string
}{
	{"Tx", "guarded", "tx"},
	{"Bulk", "bulkGuarded", "bulk"},
}

// recvName is the receiver of every generated method, as in the
// hand-written methods of guarded (read and write).
const recvName = "g"

// The markers of a method, the comment at the end of its line.
const (
	markRead  = "//guard:read"
	markWrite = "//guard:write"
)

// writePrefixes are the name prefixes of methods that must be marked
// write.
var writePrefixes = []string{"Put", "Delete", "Add", "Remove", "Insert"}

// knownStructs are the types from other packages that may appear in a
// result, with their zero values; a type not here or in the package stops
// the generator rather than receive a guessed zero value.
var knownStructs = map[string]string{"time.Time": "time.Time{}"}

func main() {
	dir := flag.String("dir", ".", "the store package's directory")
	flag.Parse()
	src, err := generateDir(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genguard:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(*dir, output), src, 0o666); err != nil {
		fmt.Fprintln(os.Stderr, "genguard:", err)
		os.Exit(1)
	}
}

// generateDir returns the content of guard.go for the package in dir.
func generateDir(dir string) ([]byte, error) {
	fset := token.NewFileSet()
	names, err := fs.Glob(os.DirFS(dir), "*.go")
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || name == output {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return generate(fset, files)
}

// pkg is what the generator knows of the package.
type pkg struct {
	fset   *token.FileSet
	types  map[string]*ast.TypeSpec // by name
	fileOf map[string]*ast.File     // the file of each type, by name
	checks map[string]*ast.FuncDecl // check functions, by the method they check
}

// method is one forwarded method.
type method struct {
	name    string
	write   bool
	params  []param
	results []ast.Expr
	check   bool
	pos     token.Pos
}

// param is one parameter of a method.
type param struct {
	name     string
	typ      ast.Expr
	variadic bool
}

// generate returns the content of guard.go for the package of files.
func generate(fset *token.FileSet, files []*ast.File) ([]byte, error) {
	p := &pkg{
		fset:   fset,
		types:  make(map[string]*ast.TypeSpec),
		fileOf: make(map[string]*ast.File),
		checks: make(map[string]*ast.FuncDecl),
	}
	if len(files) == 0 {
		return nil, errors.New("no Go files")
	}
	pkgName := files[0].Name.Name
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						p.types[ts.Name.Name] = ts
						p.fileOf[ts.Name.Name] = f
					}
				}
			case *ast.FuncDecl:
				if m, ok := checkedMethod(d); ok {
					p.checks[m] = d
				}
			}
		}
	}

	var body bytes.Buffer
	imports := make(map[string]string) // path by name
	used := make(map[string]bool)      // check functions used
	for _, fw := range forwarded {
		groups, err := p.methods(fw.iface)
		if err != nil {
			return nil, err
		}
		for _, grp := range groups {
			fmt.Fprintf(&body, "\n// %s.\n", grp.iface)
			for _, m := range grp.methods {
				if m.check {
					used[m.name] = true
				}
				if err := p.writeMethod(&body, fw.recv, fw.field, m); err != nil {
					return nil, err
				}
			}
			if err := p.collectImports(grp.iface, grp.methods, imports); err != nil {
				return nil, err
			}
		}
	}
	for name, d := range p.checks {
		if !used[name] {
			return nil, fmt.Errorf("%s: %s checks no method of %s", p.fset.Position(d.Pos()), d.Name.Name, forwardedNames())
		}
	}

	var out bytes.Buffer
	out.WriteString("// Code generated by genguard from the interfaces the front forwards; DO NOT EDIT.\n")
	out.WriteString("// To change it, change their methods or the check functions and run go generate ./store.\n\n")
	fmt.Fprintf(&out, "package %s\n", pkgName)
	var specs []string
	for _, name := range slices.Sorted(maps.Keys(imports)) {
		if path := imports[name]; pathBase(path) == name {
			specs = append(specs, strconv.Quote(path))
		} else {
			specs = append(specs, name+" "+strconv.Quote(path))
		}
	}
	switch len(specs) {
	case 0:
	case 1:
		fmt.Fprintf(&out, "\nimport %s\n", specs[0])
	default:
		fmt.Fprintf(&out, "\nimport (\n\t%s\n)\n", strings.Join(specs, "\n\t"))
	}
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the output: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// checkedMethod returns the method a function declaration checks: M for
// a function checkM without a receiver, M beginning with an upper-case
// letter.
func checkedMethod(d *ast.FuncDecl) (string, bool) {
	if d.Recv != nil {
		return "", false
	}
	m, ok := strings.CutPrefix(d.Name.Name, "check")
	if !ok {
		return "", false
	}
	r, _ := utf8.DecodeRuneInString(m)
	return m, unicode.IsUpper(r)
}

// forwardedNames names the forwarded interfaces, for messages.
func forwardedNames() string {
	var names []string
	for _, fw := range forwarded {
		names = append(names, fw.iface)
	}
	return strings.Join(names, " or ")
}

// group is the methods an interface declares itself, in its order.
type group struct {
	iface   string
	methods []method
}

// methods returns the methods of the interface name, those of the
// interfaces it embeds in their place, grouped by the interface that
// declares them.
func (p *pkg) methods(name string) ([]group, error) {
	ts, ok := p.types[name]
	if !ok {
		return nil, fmt.Errorf("no type %s in the package", name)
	}
	it, ok := ts.Type.(*ast.InterfaceType)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not an interface", p.fset.Position(ts.Pos()), name)
	}
	var groups []group
	own := group{iface: name}
	for _, f := range it.Methods.List {
		switch t := f.Type.(type) {
		case *ast.Ident: // an embedded interface of the package, in its place
			embedded, err := p.methods(t.Name)
			if err != nil {
				return nil, err
			}
			if len(own.methods) > 0 {
				groups = append(groups, own)
				own = group{iface: name}
			}
			groups = append(groups, embedded...)
		case *ast.FuncType:
			m, err := p.method(f.Names[0].Name, f.Comment, t)
			if err != nil {
				return nil, err
			}
			own.methods = append(own.methods, m)
		default:
			return nil, fmt.Errorf("%s: %s embeds %s, which genguard cannot forward", p.fset.Position(f.Pos()), name, p.expr(f.Type))
		}
	}
	if len(own.methods) > 0 {
		groups = append(groups, own)
	}
	return groups, nil
}

// method reads one interface method: its marker (in comment, the
// comment at the end of its line), parameters, results and check
// function.
func (p *pkg) method(name string, comment *ast.CommentGroup, ft *ast.FuncType) (method, error) {
	m := method{name: name, pos: ft.Pos()}
	where := p.fset.Position(ft.Pos())

	var marks []string
	if comment != nil {
		for _, c := range comment.List {
			if c.Text == markRead || c.Text == markWrite {
				marks = append(marks, c.Text)
			}
		}
	}
	if len(marks) != 1 {
		return m, fmt.Errorf("%s: %s has %d of the markers %s and %s at the end of its line, want exactly one",
			where, name, len(marks), markRead, markWrite)
	}
	m.write = marks[0] == markWrite
	for _, prefix := range writePrefixes {
		if strings.HasPrefix(name, prefix) && !m.write {
			return m, fmt.Errorf("%s: %s is marked %s, but a method named %s... writes", where, name, markRead, prefix)
		}
	}

	i := 0
	for _, f := range ft.Params.List {
		typ, variadic := f.Type, false
		if e, ok := typ.(*ast.Ellipsis); ok {
			typ, variadic = e.Elt, true
		}
		names := f.Names
		if len(names) == 0 {
			names = []*ast.Ident{nil}
		}
		for _, n := range names {
			pname := fmt.Sprintf("arg%d", i)
			if n != nil && n.Name != "_" && n.Name != recvName {
				pname = n.Name
			}
			m.params = append(m.params, param{name: pname, typ: typ, variadic: variadic})
			i++
		}
	}

	if ft.Results != nil {
		for _, f := range ft.Results.List {
			for range max(len(f.Names), 1) {
				m.results = append(m.results, f.Type)
			}
		}
	}
	if len(m.results) == 0 || p.expr(m.results[len(m.results)-1]) != "error" {
		return m, fmt.Errorf("%s: %s does not return an error last, so the front cannot refuse it", where, name)
	}

	if d, ok := p.checks[name]; ok {
		if err := p.matchCheck(m, d); err != nil {
			return m, err
		}
		m.check = true
	}
	return m, nil
}

// matchCheck returns an error unless d takes the parameters of m and
// returns an error.
func (p *pkg) matchCheck(m method, d *ast.FuncDecl) error {
	var want, got []string
	for _, prm := range m.params {
		want = append(want, p.paramType(prm.typ, prm.variadic))
	}
	for _, f := range d.Type.Params.List {
		typ := p.expr(f.Type)
		for range max(len(f.Names), 1) {
			got = append(got, typ)
		}
	}
	var results []string
	if d.Type.Results != nil {
		for _, f := range d.Type.Results.List {
			results = append(results, p.expr(f.Type))
		}
	}
	if !slices.Equal(want, got) || !slices.Equal(results, []string{"error"}) {
		return fmt.Errorf("%s: %s must take the parameters of %s (%s) and return error",
			p.fset.Position(d.Pos()), d.Name.Name, m.name, strings.Join(want, ", "))
	}
	return nil
}

// paramType returns the type of a parameter as it is written.
func (p *pkg) paramType(typ ast.Expr, variadic bool) string {
	if variadic {
		return "..." + p.expr(typ)
	}
	return p.expr(typ)
}

// writeMethod writes the forwarding method of m on the receiver type
// recv, whose field holds the store's implementation.
func (p *pkg) writeMethod(w *bytes.Buffer, recv, field string, m method) error {
	var params, args []string
	for i, prm := range m.params {
		// Consecutive parameters of one type share it, as gofmt'd code
		// writes them.
		typ := p.paramType(prm.typ, prm.variadic)
		if i+1 < len(m.params) && p.paramType(m.params[i+1].typ, m.params[i+1].variadic) == typ {
			params = append(params, prm.name)
		} else {
			params = append(params, prm.name+" "+typ)
		}
		arg := prm.name
		if prm.variadic {
			arg += "..."
		}
		args = append(args, arg)
	}
	var results, refused []string
	for i, r := range m.results {
		results = append(results, p.expr(r))
		if i < len(m.results)-1 {
			zero, err := p.zero(r)
			if err != nil {
				return fmt.Errorf("%s: result %d of %s: %w", p.fset.Position(m.pos), i+1, m.name, err)
			}
			refused = append(refused, zero)
		}
	}
	refused = append(refused, "err")
	resultList := strings.Join(results, ", ")
	if len(results) > 1 {
		resultList = "(" + resultList + ")"
	}
	guard := "read"
	if m.write {
		guard = "write"
	}
	argList := strings.Join(args, ", ")

	fmt.Fprintf(w, "\nfunc (%s *%s) %s(%s) %s {\n", recvName, recv, m.name, strings.Join(params, ", "), resultList)
	fmt.Fprintf(w, "\tif err := %s.%s(); err != nil {\n\t\treturn %s\n\t}\n", recvName, guard, strings.Join(refused, ", "))
	if m.check {
		fmt.Fprintf(w, "\tif err := check%s(%s); err != nil {\n\t\treturn %s\n\t}\n", m.name, argList, strings.Join(refused, ", "))
	}
	fmt.Fprintf(w, "\treturn %s.%s.%s(%s)\n}\n", recvName, field, m.name, argList)
	return nil
}

// zero returns the zero value of the type typ as Go source.
func (p *pkg) zero(typ ast.Expr) (string, error) {
	switch t := typ.(type) {
	case *ast.ArrayType:
		if t.Len == nil {
			return "nil", nil
		}
		return p.expr(t) + "{}", nil
	case *ast.MapType, *ast.StarExpr, *ast.FuncType, *ast.InterfaceType, *ast.ChanType:
		return "nil", nil
	case *ast.SelectorExpr:
		if z, ok := knownStructs[p.expr(t)]; ok {
			return z, nil
		}
		return "", fmt.Errorf("the zero value of %s is unknown to genguard (knownStructs)", p.expr(t))
	case *ast.Ident:
		switch t.Name {
		case "bool":
			return "false", nil
		case "string":
			return `""`, nil
		case "error", "any":
			return "nil", nil
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
			"uintptr", "byte", "rune", "float32", "float64", "complex64", "complex128":
			return "0", nil
		}
		ts, ok := p.types[t.Name]
		if !ok {
			return "", fmt.Errorf("no type %s in the package", t.Name)
		}
		if _, ok := ts.Type.(*ast.StructType); ok {
			return t.Name + "{}", nil
		}
		// Otherwise the zero value of what it is defined as, an untyped
		// constant or nil, serves.
		return p.zero(ts.Type)
	}
	return "", fmt.Errorf("the zero value of %s is unknown to genguard", p.expr(typ))
}

// collectImports adds to imports the packages that the signatures of
// methods, declared in the interface iface, name.
func (p *pkg) collectImports(iface string, methods []method, imports map[string]string) error {
	f := p.fileOf[iface]
	byName := make(map[string]string)
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return err
		}
		name := pathBase(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		byName[name] = path
	}
	var exprs []ast.Expr
	for _, m := range methods {
		for _, prm := range m.params {
			exprs = append(exprs, prm.typ)
		}
		exprs = append(exprs, m.results...)
	}
	var err error
	for _, e := range exprs {
		ast.Inspect(e, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			path, ok := byName[x.Name]
			if !ok {
				err = fmt.Errorf("%s: package %s is not imported", p.fset.Position(sel.Pos()), x.Name)
				return false
			}
			imports[x.Name] = path
			return false
		})
	}
	return err
}

// expr returns e as Go source.
func (p *pkg) expr(e ast.Expr) string {
	var b bytes.Buffer
	if err := format.Node(&b, p.fset, e); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return b.String()
}

// pathBase returns the last element of an import path, the package's
// name by convention.
func pathBase(path string) string {
	return path[strings.LastIndex(path, "/")+1:]
}
