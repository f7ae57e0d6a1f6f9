package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrationFiles holds the schema migrations, NNNN_name.sql, applied in
// order of NNNN. A migration, once released, is never edited: a change
// of schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered SQL script.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the migrations of fsys (its migrations directory)
// and checks that they are numbered 1, 2, 3, ... without gaps.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("pgstore: migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || path.Ext(name) != ".sql" {
			return nil, fmt.Errorf("pgstore: migration file %s is not named NNNN_name.sql", name)
		}
		sql, err := fs.ReadFile(fsys, path.Join("migrations", name))
		if err != nil {
			return nil, fmt.Errorf("pgstore: migrations: %w", err)
		}
		ms = append(ms, migration{version: version, name: name, sql: string(sql)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("pgstore: migration %s: want version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// migrationLockClass is the first key of the advisory lock that migrate
// holds; the second is the schema's key (see currentSchema).
const migrationLockClass = 0x1de7

// currentSchema returns the name of conn's current schema, the one the
// tables are in, and the second key of migrate's advisory lock: a hash of
// the name, so that stores in different schemas of one database do not
// wait for each other.
func currentSchema(ctx context.Context, conn *pgx.Conn) (name string, key int32, err error) {
	var schema *string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return "", 0, fmt.Errorf("pgstore: connect: %w", err)
	}
	if schema == nil {
		return "", 0, errors.New("pgstore: no schema to create the tables in: the search_path names no schema that exists")
	}
	h := fnv.New32a()
	h.Write([]byte(*schema))
	return *schema, int32(h.Sum32()), nil
}

// migrate applies to the current schema of conn the migrations it has not
// applied yet, each in its own transaction that also records it in
// schema_migrations. It holds a session
// advisory lock meanwhile, so that concurrent callers (other processes
// starting at the same moment) apply each migration once: the others
// wait, then find nothing left to do.
func migrate(ctx context.Context, conn *pgx.Conn, ms []migration) (err error) {
	schema, key, err := currentSchema(ctx, conn)
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", migrationLockClass, key); err != nil {
		return fmt.Errorf("pgstore: lock schema %s for migrations: %w", schema, err)
	}
	defer func() {
		// A failed unlock leaves the lock to the session's end, so close
		// the connection rather than return it to the pool locked.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, $2)", migrationLockClass, key); uerr != nil {
			_ = conn.Close(context.WithoutCancel(ctx))
			if err == nil {
				err = fmt.Errorf("pgstore: unlock schema %s after migrations: %w", schema, uerr)
			}
		}
	}()

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("pgstore: create schema_migrations in %s: %w", schema, err)
	}
	var current int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("pgstore: read schema version of %s: %w", schema, err)
	}
	if current > len(ms) {
		return fmt.Errorf("pgstore: schema %s is at version %d, newer than this build of pgstore knows (%d): upgrade the program", schema, current, len(ms))
	}
	for _, m := range ms[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: apply migration %s to schema %s: %w", m.name, schema, err)
		}
	}
	return nil
}
