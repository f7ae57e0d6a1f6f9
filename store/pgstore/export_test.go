package pgstore

import (
	"context"
	"io/fs"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/identitylib/identity/internal/testutil"
)

// PrefixEnd is prefixEnd, for tests.
var PrefixEnd = prefixEnd

// AuditPageSQL is auditPageSQL, for tests.
var AuditPageSQL = auditPageSQL

// TextCeil is textCeil, for tests.
var TextCeil = textCeil

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

// OpenCounting opens a Store as Open does, over connections that count
// the messages the client sends: every write to a connection's socket,
// which is one flight of a round trip (pgx writes a pipeline of
// statements at once).
func OpenCounting(ctx context.Context, url string, opts *Options) (*Store, *atomic.Int64, error) {
	writes := new(atomic.Int64)
	s, err := open(ctx, url, opts, func(cfg *pgxpool.Config) {
		dial := cfg.ConnConfig.DialFunc
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, writes: writes}, nil
		}
	})
	if s != nil {
		// No View's transaction is ended by its timer while a test
		// counts: only by the next transaction on its connection, or
		// Close.
		s.endDelay = time.Hour
	}
	return s, writes, err
}

// countingConn is a net.Conn that counts its writes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

// Write implements net.Conn.
func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// QueueBlocked returns how many goroutines are blocked waiting in a
// writer queue (of any Store), from their stacks: parked in the select of
// enter.
func QueueBlocked() int {
	blocked := 0
	for _, g := range testutil.Goroutines() {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[select") && strings.Contains(g, "pgstore.(*writerQueue).enter") {
			blocked++
		}
	}
	return blocked
}
