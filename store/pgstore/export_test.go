package pgstore

import (
	"context"
	"io/fs"

	"github.com/jackc/pgx/v5"
)

// PrefixEnd is prefixEnd, for tests.
var PrefixEnd = prefixEnd

// MigrationFiles is the embedded migrations, for tests.
var MigrationFiles fs.FS = migrationFiles

// LoadMigrations reads the migrations of fsys and returns how many there
// are.
func LoadMigrations(fsys fs.FS) (int, error) {
	ms, err := loadMigrations(fsys)
	return len(ms), err
}

// Migrate applies the migrations of fsys to the current schema of conn,
// as Open does with the embedded ones, and returns how many fsys holds.
func Migrate(ctx context.Context, conn *pgx.Conn, fsys fs.FS) (int, error) {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return 0, err
	}
	return len(ms), migrate(ctx, conn, ms)
}
