package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/identitylib/identity/store/pgstore"
)

// backupBuffer is the size of the buffer of env.writeFile: large writes,
// and few round trips through the admin socket.
const backupBuffer = 1 << 20

// backup writes a consistent copy of the database to a file, whether or
// not a server holds the database: identityd backup -o FILE. Through the
// admin socket it copies the running server's database without stopping
// its writers (identity.Service.Backup), and the client writes the file.
func backup(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	out := fs.String("o", "", "write the backup to `FILE`, through FILE.tmp, which is renamed into place once complete")
	if _, err := parseCommand(fs, args, nil, "o"); err != nil {
		return err
	}
	if pgstore.IsURL(e.dbPath) {
		return errors.New("identityd backup copies a bbolt file; back up a PostgreSQL database with pg_dump")
	}
	svc, err := e.open(true, nil)
	if err != nil {
		return err
	}
	defer closeService(svc, &err)
	var n int64
	if _, err := e.writeFile(*out, func(w io.Writer) (_ int, err error) {
		n, err = svc.Backup(ctx, w)
		return 0, err
	}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backed up %s to %s (%d bytes)\n", e.dbName(), *out, n)
	return nil
}

// atomicFile is the outputFile of this process: name + ".tmp" until
// Commit.
type atomicFile struct {
	f    *os.File
	name string
	done bool
}

// createOutput creates name + ".tmp" (mode 0600, replacing a leftover
// one) for an atomicFile whose Commit renames it to name. It refuses a
// name that is the database file db: renaming over the file of a running
// server would leave the server writing to a file no longer there.
func createOutput(name, db string) (*atomicFile, error) {
	if name == "" || name == "-" {
		return nil, fmt.Errorf("%q is not a file name", name)
	}
	if !pgstore.IsURL(db) {
		a, aerr := os.Stat(name)
		b, berr := os.Stat(db)
		if aerr == nil && berr == nil && os.SameFile(a, b) {
			return nil, fmt.Errorf("%s is the database itself: write to another file", name)
		}
	}
	f, err := os.OpenFile(name+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return &atomicFile{f: f, name: name}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) { return a.f.Write(p) }

// Commit syncs the file, renames it into place and syncs the directory,
// so that the name survives a crash too.
func (a *atomicFile) Commit() error {
	if a.done {
		return errors.New("commit of a closed file")
	}
	a.done = true
	tmp := a.f.Name()
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, a.name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(a.name))
}

// Close removes the file unless it was committed.
func (a *atomicFile) Close() error {
	if a.done {
		return nil
	}
	a.done = true
	a.f.Close()
	return os.Remove(a.f.Name())
}

// syncDir syncs the directory dir, making a rename in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
