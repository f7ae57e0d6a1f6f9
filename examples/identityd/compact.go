package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/pgstore"
)

// compact rewrites the bbolt file with only the pages its records use:
// identityd compact. It runs offline (no server may hold the file), so it
// never goes through the admin socket.
func compact(ctx context.Context, e *env, flags *flag.FlagSet, args []string) error {
	if _, err := parseCommand(flags, args, nil); err != nil {
		return err
	}
	if pgstore.IsURL(e.dbPath) {
		return errors.New("identityd compact rewrites a bbolt file; PostgreSQL reclaims space with VACUUM")
	}
	if _, err := os.Stat(e.dbPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("database %s does not exist", e.dbPath)
	}
	res, err := boltstore.Compact(e.dbPath, nil)
	if err != nil {
		if strings.Contains(err.Error(), "locked by another Store or process") {
			return fmt.Errorf("database %s is in use (is identityd serve running?): stop the server, then compact", e.dbPath)
		}
		return err
	}
	fmt.Fprintf(e.stdout, "compacted %s: %d bytes before, %d after\n", e.dbPath, res.Before, res.After)
	return nil
}
