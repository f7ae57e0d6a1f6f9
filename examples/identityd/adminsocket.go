package main

// The admin socket. serve listens on a Unix socket (mode 0600, by default
// the bbolt file's path + ".sock"), and every other command, finding a
// server that answers there, runs in that server instead of opening the
// database itself, which the server holds. The command runs the same
// function either way: in the server its env's open returns the running
// Service (which closeService leaves open), and its standard streams,
// environment variables and files (env.getenv, env.openFile,
// env.createFile) are the client's, reached over the connection. So a key
// revoked through the socket is refused by the server's very next
// request, and a relative -file or -o names a file in the client's
// working directory, opened by the client with its own permissions.
//
// The protocol is frames over the connection: a type byte, a 32-bit
// handle and a 32-bit payload length (big-endian), then the payload (at
// most maxFramePayload bytes). The client sends one frameRun (JSON
// adminRequest: the command line after the global flags). The server then
// sends output (frameStdout, frameStderr), requests, which the client
// answers in order with frameData, frameOK or frameFail, and at last
// frameExit with the exit status. The server sends one request at a time
// and pulls standard input as the command reads it, so the client reads
// only what the command asks for. A client that disconnects (Ctrl-C)
// cancels the command's context.
//
// Who may connect: the socket is created with mode 0600, the server
// accepts a peer only if SO_PEERCRED shows its own user id or root's, and
// the client uses a socket only if the file, and the server behind it,
// belong to its own user: a command's input (a password on standard
// input) must not go to another user's server. This needs Linux; on other
// systems the socket is off by default (see adminsocket_other.go).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
)

// adminSocketOff is the -admin-socket value that turns the socket off.
const adminSocketOff = "off"

// adminProtocol is the version of the protocol. A server refuses a
// request of another version (a client binary of another release).
const adminProtocol = 1

// Limits of the protocol.
const (
	maxFramePayload = 1 << 20
	// adminRequestTimeout bounds the wait for a client's request after it
	// connected; once the command runs, nothing is bounded (an import may
	// read standard input for hours).
	adminRequestTimeout = 30 * time.Second
	// adminFinalWrite is how long a command cancelled at shutdown has to
	// send its last output and exit status.
	adminFinalWrite = time.Second
)

// Frame types. The client sends frameRun and the replies; the server
// sends the rest.
const (
	frameRun    = 'R' // JSON adminRequest
	frameData   = 'D' // reply to frameRead: the bytes read, none at end of file
	frameOK     = 'K' // reply: done; the handle, or a value as payload
	frameFail   = 'F' // reply: failed; the message as payload
	frameStdout = 'o' // bytes for standard output
	frameStderr = 'e' // bytes for standard error
	frameExit   = 'x' // the exit status, one byte; the last frame
	frameRead   = 'r' // read up to the 32-bit payload's bytes from the handle (0: standard input)
	frameGetenv = 'g' // the value of the environment variable named by the payload
	frameOpen   = 'p' // open the file named by the payload for reading; reply: its handle
	frameCreate = 'c' // create the file named by the payload (see env.createFile); reply: its handle
	frameWrite  = 'w' // write the payload to the handle
	frameCommit = 'm' // complete the created file of the handle (sync, rename into place)
	frameClose  = 'z' // close the handle; a created file not completed is removed
)

// stdinHandle is the handle of the client's standard input.
const stdinHandle = 0

// frame is one frame of the protocol.
type frame struct {
	typ     byte
	handle  uint32
	payload []byte
}

// writeFrame writes f to w in one Write.
func writeFrame(w io.Writer, f frame) error {
	if len(f.payload) > maxFramePayload {
		return fmt.Errorf("admin socket: frame of %d bytes exceeds %d", len(f.payload), maxFramePayload)
	}
	b := make([]byte, 9, 9+len(f.payload))
	b[0] = f.typ
	put32(b[1:5], f.handle)
	put32(b[5:9], uint32(len(f.payload)))
	_, err := w.Write(append(b, f.payload...))
	return err
}

// readFrame reads one frame from r.
func readFrame(r io.Reader) (frame, error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := get32(h[5:9])
	if n > maxFramePayload {
		return frame{}, fmt.Errorf("admin socket: frame of %d bytes exceeds %d", n, maxFramePayload)
	}
	f := frame{typ: h[0], handle: get32(h[1:5]), payload: make([]byte, n)}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, noEOF(err)
	}
	return f, nil
}

// noEOF turns io.EOF in the middle of a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// uint32Payload encodes n as a payload.
func uint32Payload(n int) []byte {
	b := make([]byte, 4)
	put32(b, uint32(n))
	return b
}

// put32 writes v to b[:4], big-endian.
func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// get32 reads a big-endian uint32 from b[:4].
func get32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// adminRequest is the payload of frameRun.
type adminRequest struct {
	Protocol int
	// Args is the command line after the global flags.
	Args []string
	// DB is the client's -db, made absolute for a file, so that a server
	// refuses a command meant for another database.
	DB string
}

// adminSocketPath returns the admin socket of the database db given the
// -admin-socket value flag: flag itself, none for "off", and by default
// db + ".sock" for a bbolt file and none for PostgreSQL (or where the
// socket is not supported).
func adminSocketPath(flag, db string) string {
	switch {
	case flag == adminSocketOff:
		return ""
	case flag != "":
		return flag
	case pgstore.IsURL(db), !adminSocketSupported:
		return ""
	}
	return db + ".sock"
}

// The client side.

// dialAdmin connects to the admin socket of a server that holds the
// database. It returns nil, nil when there is no socket file, or nothing
// answers on it (a server that was killed leaves it behind): the command
// then runs in this process. A file that is not a socket, or that another
// user owns, is an error.
func (e *env) dialAdmin(ctx context.Context) (net.Conn, error) {
	path := adminSocketPath(e.adminSocket, e.dbPath)
	if path == "" {
		return nil, nil
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("admin socket %s is not a socket (remove it, or give -admin-socket another path)", path)
	}
	if uid, ok := fileOwner(fi); !ok || uid != os.Geteuid() {
		return nil, foreignSocket(path, "belongs to", uid)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a socket left behind; no server holds the database through it
	}
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	// The file's owner is checked above for a clear message; the peer's
	// credentials are what the kernel says of the process that listens.
	uid, err := peerUID(conn.(*net.UnixConn))
	if err == nil && uid != os.Geteuid() {
		err = foreignSocket(path, "is served by a process of", uid)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// foreignSocket is the error of a socket of another user.
func foreignSocket(path, what string, uid int) error {
	return fmt.Errorf("admin socket %s %s uid %d, not %d (this user): refusing to use it; "+
		"run identityd as the user that runs identityd serve", path, what, uid, os.Geteuid())
}

// runRemote runs the command line args (without the global flags) in the
// server at the other end of conn, serving its requests for standard
// input, environment variables and files, and returns the command's exit
// status.
func runRemote(ctx context.Context, conn net.Conn, e *env, args []string) int {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c := &adminClient{e: e, local: localCaller{db: e.dbPath}, handles: map[uint32]any{}}
	defer c.closeAll()
	code, err := c.run(conn, args)
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return report(e.stderr, fmt.Errorf("admin socket: %w", err))
	}
	return code
}

// adminClient is the client's side of one command.
type adminClient struct {
	e     *env
	local caller
	// handles holds the files the server opened (io.ReadCloser) and
	// created (outputFile), by handle.
	handles map[uint32]any
	next    uint32
}

// run sends the command and serves the server's frames until frameExit.
func (c *adminClient) run(conn net.Conn, args []string) (int, error) {
	db := c.e.dbPath
	if !pgstore.IsURL(db) {
		if abs, err := filepath.Abs(db); err == nil {
			db = abs
		}
	}
	req, err := json.Marshal(adminRequest{Protocol: adminProtocol, Args: args, DB: db})
	if err != nil {
		return 0, err
	}
	if err := writeFrame(conn, frame{typ: frameRun, payload: req}); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		f, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			return 0, errors.New("the server closed the connection before the command finished")
		}
		if err != nil {
			return 0, err
		}
		switch f.typ {
		case frameStdout:
			if _, err := c.e.stdout.Write(f.payload); err != nil {
				return 0, fmt.Errorf("standard output: %w", err)
			}
		case frameStderr:
			_, _ = c.e.stderr.Write(f.payload)
		case frameExit:
			if len(f.payload) != 1 {
				return 0, errors.New("malformed exit status")
			}
			return int(f.payload[0]), nil
		default:
			if err := writeFrame(conn, c.answer(f)); err != nil {
				return 0, err
			}
		}
	}
}

// answer serves one request of the server.
func (c *adminClient) answer(f frame) frame {
	fail := func(err error) frame { return frame{typ: frameFail, payload: []byte(err.Error())} }
	name := string(f.payload)
	switch f.typ {
	case frameRead:
		if len(f.payload) != 4 {
			return fail(errors.New("malformed read request"))
		}
		r, ok := c.reader(f.handle)
		if !ok {
			return fail(fmt.Errorf("read of unknown handle %d", f.handle))
		}
		buf := make([]byte, min(int(get32(f.payload)), maxFramePayload))
		n, err := readSome(r, buf)
		if n == 0 && err != nil && !errors.Is(err, io.EOF) {
			return fail(err)
		}
		return frame{typ: frameData, payload: buf[:n]}
	case frameGetenv:
		return frame{typ: frameOK, payload: []byte(c.local.Getenv(name))}
	case frameOpen:
		rc, err := c.local.Open(name)
		if err != nil {
			return fail(err)
		}
		return frame{typ: frameOK, handle: c.add(rc)}
	case frameCreate:
		out, err := c.local.Create(name)
		if err != nil {
			return fail(err)
		}
		return frame{typ: frameOK, handle: c.add(out)}
	case frameWrite, frameCommit:
		out, ok := c.handles[f.handle].(outputFile)
		if !ok {
			return fail(fmt.Errorf("write to unknown handle %d", f.handle))
		}
		var err error
		if f.typ == frameWrite {
			_, err = out.Write(f.payload)
		} else {
			err = out.Commit()
		}
		if err != nil {
			return fail(err)
		}
		return frame{typ: frameOK}
	case frameClose:
		h, ok := c.handles[f.handle].(io.Closer)
		if !ok {
			return frame{typ: frameOK} // standard input, or closed already
		}
		delete(c.handles, f.handle)
		if err := h.Close(); err != nil {
			return fail(err)
		}
		return frame{typ: frameOK}
	}
	return fail(fmt.Errorf("unknown request %q (is the server another version of identityd?)", f.typ))
}

// reader returns the reader of handle h.
func (c *adminClient) reader(h uint32) (io.Reader, bool) {
	if h == stdinHandle {
		return c.e.stdin, true
	}
	r, ok := c.handles[h].(io.ReadCloser)
	return r, ok
}

// readSome reads into buf until it has at least one byte or an error.
func readSome(r io.Reader, buf []byte) (int, error) {
	for range 100 {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// add registers an opened file and returns its handle.
func (c *adminClient) add(h any) uint32 {
	c.next++
	c.handles[c.next] = h
	return c.next
}

// closeAll closes what the server left open: a created file that was not
// completed is removed.
func (c *adminClient) closeAll() {
	for h, f := range c.handles {
		if cl, ok := f.(io.Closer); ok {
			_ = cl.Close()
		}
		delete(c.handles, h)
	}
}

// The server side.

// adminServer runs the commands that arrive on the admin socket in the
// running server.
type adminServer struct {
	path string
	db   string // serve's -db
	svc  *identity.Service
	st   store.Store       // svc's store
	opts *identity.Options // svc's options
	// writeMetrics writes the server's metrics in the Prometheus text
	// format, for identityd metrics.
	writeMetrics func(io.Writer) error
	logger       *slog.Logger
	ln           *net.UnixListener
	// console is serve's console, which operator create invites with;
	// nil under -console=false.
	console *console.Handler

	// ctx is the context of the commands; cancel ends them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// lent holds the Services that serve lends to the commands of its admin
// socket: closeService leaves them open, so that a command closes what
// env.open gave it the same way wherever it runs.
var lent sync.Map // *identity.Service -> struct{}

// startAdminSocket listens on the admin socket path (none if "") and runs
// the commands that arrive on it against svc, whose store is st and
// options opts, until ctx ends; then running commands have
// shutdownTimeout to finish before their contexts are cancelled. stop
// stops it and waits for every command to end; call it before svc is
// closed. explicit says that the path was given rather than derived from
// -db: a derived path too long for a socket address only turns the socket
// off, with a warning. con is serve's console (nil without one), which
// operator create invites with.
func startAdminSocket(ctx context.Context, path string, explicit bool, db string, svc *identity.Service, st store.Store, opts *identity.Options, writeMetrics func(io.Writer) error, logger *slog.Logger, con *console.Handler) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	if !adminSocketSupported {
		return nil, fmt.Errorf("-admin-socket: %s (use -admin-socket=%s)", errAdminSocketUnsupported, adminSocketOff)
	}
	if len(path) > maxSocketPath {
		if explicit {
			return nil, fmt.Errorf("-admin-socket %s: longer than the %d bytes a socket address holds", path, maxSocketPath)
		}
		logger.Warn("no admin socket: its path is longer than a socket address holds; give -admin-socket a shorter path",
			"path", path, "max_bytes", maxSocketPath)
		return func() {}, nil
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	// The peer check (SO_PEERCRED) guards the socket in the moment before
	// the mode is set, whatever the umask.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	a := &adminServer{path: path, db: db, svc: svc, st: st, opts: opts, writeMetrics: writeMetrics, logger: logger, ln: ln, console: con}
	a.ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	lent.Store(svc, struct{}{})
	a.wg.Go(a.accept)
	stopWatching := context.AfterFunc(ctx, a.shutdown)
	logger.Info("admin socket listening", "path", path)
	return func() {
		stopWatching()
		a.shutdown()
		a.wg.Wait()
		a.cancel()
		lent.Delete(svc)
	}, nil
}

// removeStaleSocket removes a socket that a server which was killed left
// at path. A socket that answers, or a file of another kind, stays, and
// is an error.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("admin socket %s: the file exists and is not a socket", path)
	}
	conn, err := net.Dial("unix", path)
	if err == nil {
		conn.Close()
		return fmt.Errorf("admin socket %s is in use by another process", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("admin socket: remove the socket a previous server left: %w", err)
	}
	return nil
}

// shutdown stops accepting (removing the socket file) and gives running
// commands shutdownTimeout before their contexts are cancelled.
func (a *adminServer) shutdown() {
	a.once.Do(func() {
		a.ln.Close()
		time.AfterFunc(shutdownTimeout, a.cancel)
	})
}

// accept accepts connections until the listener closes.
func (a *adminServer) accept() {
	for {
		conn, err := a.ln.AcceptUnix()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			a.logger.Warn("admin socket: accept failed", "err", err)
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond): // out of descriptors, say
			}
			continue
		}
		a.wg.Go(func() { a.handle(conn) })
	}
}

// service is env.open in a command of the socket: the running Service,
// or, for a command that needs options of its own (signing-key rotate's
// algorithm), a Service of its own over the same store, made with the
// server's options and the command's non-zero ones (its store's Close
// does nothing).
func (a *adminServer) service(opts *identity.Options) (*identity.Service, error) {
	if opts == nil {
		return a.svc, nil
	}
	merged := *a.opts
	dst, src := reflect.ValueOf(&merged).Elem(), reflect.ValueOf(opts).Elem()
	for i := range src.NumField() {
		if f := src.Field(i); !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
	var st store.Store = keepOpen{a.st}
	if b, ok := a.st.(store.Backuper); ok {
		st = keepOpenBackuper{keepOpen{a.st}, b}
	}
	return identity.New(st, &merged)
}

// keepOpen is a store whose Close leaves it open.
type keepOpen struct{ store.Store }

func (keepOpen) Close() error { return nil }

// keepOpenBackuper is keepOpen of a store that implements store.Backuper.
type keepOpenBackuper struct {
	keepOpen
	store.Backuper
}

// handle runs the command of one connection.
func (a *adminServer) handle(conn *net.UnixConn) {
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	s := &adminSession{conn: conn, ctx: ctx, replies: make(chan frame)}
	// Cancelled (the client went, or shutdown ran out of time): the
	// command stops at its next store call, and has a moment to say so.
	stopDeadline := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now().Add(adminFinalWrite)) })
	defer stopDeadline()
	var reading sync.WaitGroup
	defer func() {
		conn.Close()
		reading.Wait()
	}()

	// The request is read before any refusal, so that the client, having
	// written it whole, reads the refusal rather than a broken pipe.
	req, msg := a.request(conn)
	uid, err := peerUID(conn)
	if err != nil {
		a.logger.Warn("admin socket: refused a connection", "err", err)
		s.refuse(fmt.Sprintf("identityd: admin socket: %v\n", err))
		return
	}
	if uid != os.Geteuid() && uid != 0 {
		a.logger.Warn("admin socket: refused a connection of another user", "uid", uid)
		s.refuse(fmt.Sprintf("identityd: admin socket %s: uid %d may not run commands in this server, which runs as uid %d\n", a.path, uid, os.Geteuid()))
		return
	}
	if msg != "" {
		s.refuse("identityd: admin socket: " + msg + "\n")
		return
	}
	reading.Go(func() { s.readReplies(cancel) })
	e := &env{dbPath: a.db, adminSocket: a.path, stdin: &remoteReader{s: s, handle: stdinHandle},
		stdout: remoteWriter{s, frameStdout}, stderr: remoteWriter{s, frameStderr}, caller: remoteCaller{s}, server: a}
	name, code := a.run(ctx, e, uid, req.Args)
	a.logger.Info("admin command", "command", name, "uid", uid, "status", code)
	_ = s.send(frame{typ: frameExit, payload: []byte{byte(code)}})
}

// request reads and checks the client's request, or returns why not.
func (a *adminServer) request(conn *net.UnixConn) (adminRequest, string) {
	var req adminRequest
	_ = conn.SetReadDeadline(time.Now().Add(adminRequestTimeout))
	f, err := readFrame(conn)
	_ = conn.SetReadDeadline(time.Time{})
	switch {
	case err != nil:
		return req, fmt.Sprintf("reading the request: %v", err)
	case f.typ != frameRun || json.Unmarshal(f.payload, &req) != nil:
		return req, "malformed request"
	case req.Protocol != adminProtocol:
		return req, fmt.Sprintf("protocol %d, but this server speaks %d: use the identityd binary of the running server", req.Protocol, adminProtocol)
	case len(req.Args) == 0:
		return req, "no command"
	case !sameDatabase(req.DB, a.db):
		return req, fmt.Sprintf("this server serves the database %s, not %s", a.db, req.DB)
	}
	return req, ""
}

// sameDatabase reports whether the client's -db names the server's
// database file. PostgreSQL URLs are not compared: the client named the
// socket explicitly.
func sameDatabase(client, server string) bool {
	if pgstore.IsURL(server) || pgstore.IsURL(client) {
		return pgstore.IsURL(server) && pgstore.IsURL(client)
	}
	a, err := os.Stat(client)
	if err != nil {
		return false
	}
	b, err := os.Stat(server)
	return err == nil && os.SameFile(a, b)
}

// run runs the command line args of the operator uid (the client's user
// id) in e, as run does in a process of its own, and returns the
// command's name and exit status. A panic is the command's failure, not
// the server's.
func (a *adminServer) run(ctx context.Context, e *env, uid int, args []string) (name string, code int) {
	defer func() {
		if v := recover(); v != nil {
			a.logger.Error("admin command panicked", "command", name, "panic", v, "stack", string(debug.Stack()))
			code = report(e.stderr, fmt.Errorf("internal error: %v", v))
		}
	}()
	cmd, rest, err := lookup(args)
	if err != nil {
		return args[0], report(e.stderr, err)
	}
	if cmd.local {
		return cmd.name, report(e.stderr, fmt.Errorf("%s cannot run through the admin socket of a running server", cmd.name))
	}
	return cmd.name, report(e.stderr, cmd.run(operatorContext(ctx, cmd, uid), e, cmd.flagSet(e.stderr), rest))
}

// adminSession is the server's side of one connection.
type adminSession struct {
	conn net.Conn
	ctx  context.Context
	wmu  sync.Mutex // held while a frame is written
	rmu  sync.Mutex // held from a request until its reply
	// replies carries the client's replies from readReplies, which closes
	// it when the client is gone.
	replies chan frame
	broken  error // set under rmu: no more requests
}

// readReplies passes the client's frames to replies until the connection
// ends, and then cancels the command: the client is gone.
func (s *adminSession) readReplies(cancel context.CancelFunc) {
	defer close(s.replies)
	defer cancel()
	r := bufio.NewReaderSize(s.conn, 64<<10)
	for {
		f, err := readFrame(r)
		if err != nil {
			return
		}
		select {
		case s.replies <- f:
		case <-s.ctx.Done():
			return
		}
	}
}

// send writes one frame.
func (s *adminSession) send(f frame) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return writeFrame(s.conn, f)
}

// refuse sends msg and exit status 1.
func (s *adminSession) refuse(msg string) {
	if s.send(frame{typ: frameStderr, payload: []byte(msg)}) == nil {
		_ = s.send(frame{typ: frameExit, payload: []byte{exitError}})
	}
}

// errClientGone is the error of a request whose client has gone.
var errClientGone = errors.New("the admin client has gone")

// request sends a request and waits for its reply. A frameFail reply is
// returned as an error with its message.
func (s *adminSession) request(f frame) (frame, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.broken != nil {
		return frame{}, s.broken
	}
	if err := s.send(f); err != nil {
		s.broken = errClientGone
		return frame{}, s.broken
	}
	select {
	case r, ok := <-s.replies:
		switch {
		case !ok:
			s.broken = errClientGone
			return frame{}, s.broken
		case r.typ == frameFail:
			return frame{}, errors.New(string(r.payload))
		}
		return r, nil
	case <-s.ctx.Done():
		s.broken = s.ctx.Err() // a late reply would answer the next request
		return frame{}, s.broken
	}
}

// remoteWriter writes to the client's standard output or error.
type remoteWriter struct {
	s   *adminSession
	typ byte
}

func (w remoteWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), maxFramePayload)]
		if err := w.s.send(frame{typ: w.typ, payload: chunk}); err != nil {
			return n, errClientGone
		}
		n += len(chunk)
		p = p[len(chunk):]
	}
	return n, nil
}

// remoteReader reads the client's standard input or a file it opened.
type remoteReader struct {
	s      *adminSession
	handle uint32
	eof    bool
}

func (r *remoteReader) Read(p []byte) (int, error) {
	if r.eof {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := min(len(p), maxFramePayload)
	f, err := r.s.request(frame{typ: frameRead, handle: r.handle, payload: uint32Payload(n)})
	switch {
	case err != nil:
		return 0, err
	case f.typ != frameData || len(f.payload) > n:
		return 0, errors.New("admin socket: malformed reply to a read")
	case len(f.payload) == 0:
		r.eof = true
		return 0, io.EOF
	}
	return copy(p, f.payload), nil
}

// Close closes the client's file (not its standard input).
func (r *remoteReader) Close() error {
	if r.handle == stdinHandle {
		return nil
	}
	_, err := r.s.request(frame{typ: frameClose, handle: r.handle})
	return err
}

// remoteCaller is the caller of a command of the socket: the client.
type remoteCaller struct{ s *adminSession }

func (c remoteCaller) Getenv(name string) string {
	f, err := c.s.request(frame{typ: frameGetenv, payload: []byte(name)})
	if err != nil {
		return ""
	}
	return string(f.payload)
}

func (c remoteCaller) Open(name string) (io.ReadCloser, error) {
	f, err := c.s.request(frame{typ: frameOpen, payload: []byte(name)})
	if err != nil {
		return nil, err
	}
	return &remoteReader{s: c.s, handle: f.handle}, nil
}

func (c remoteCaller) Create(name string) (outputFile, error) {
	f, err := c.s.request(frame{typ: frameCreate, payload: []byte(name)})
	if err != nil {
		return nil, err
	}
	return &remoteFile{s: c.s, handle: f.handle}, nil
}

// remoteFile is a file the client created for the command.
type remoteFile struct {
	s      *adminSession
	handle uint32
	closed bool
}

func (f *remoteFile) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), maxFramePayload)]
		if _, err := f.s.request(frame{typ: frameWrite, handle: f.handle, payload: chunk}); err != nil {
			return n, err
		}
		n += len(chunk)
		p = p[len(chunk):]
	}
	return n, nil
}

func (f *remoteFile) Commit() error {
	if _, err := f.s.request(frame{typ: frameCommit, handle: f.handle}); err != nil {
		return err
	}
	f.closed = true // the client has closed it
	return nil
}

func (f *remoteFile) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	_, err := f.s.request(frame{typ: frameClose, handle: f.handle})
	return err
}

// The caller of a command.

// caller is the side that gave a command: its environment variables and
// files. A command reaches them through env, so that one that arrived on
// the admin socket reaches the client's.
type caller interface {
	// Getenv returns the value of the environment variable name.
	Getenv(name string) string
	// Open opens the file name for reading.
	Open(name string) (io.ReadCloser, error)
	// Create creates the file name, as createOutput does.
	Create(name string) (outputFile, error)
}

// outputFile is a file being written: name + ".tmp" until Commit renames
// it into place. Close without Commit removes it; Close after Commit does
// nothing.
type outputFile interface {
	io.Writer
	// Commit syncs the file, closes it and renames it into place.
	Commit() error
	Close() error
}

// localCaller is this process as the caller. db is the -db of the
// command, which Create refuses to replace.
type localCaller struct{ db string }

func (localCaller) Getenv(name string) string { return os.Getenv(name) }

func (localCaller) Open(name string) (io.ReadCloser, error) { return os.Open(name) }

func (l localCaller) Create(name string) (outputFile, error) { return createOutput(name, l.db) }

// callerSide returns the caller of the command.
func (e *env) callerSide() caller {
	if e.caller != nil {
		return e.caller
	}
	return localCaller{db: e.dbPath}
}

// getenv returns the caller's environment variable name.
func (e *env) getenv(name string) string { return e.callerSide().Getenv(name) }

// openFile opens the caller's file name for reading; a relative name is
// relative to the caller's working directory.
func (e *env) openFile(name string) (io.ReadCloser, error) { return e.callerSide().Open(name) }

// createFile creates the caller's file name as an outputFile: complete
// once committed, never half written (see createOutput).
func (e *env) createFile(name string) (outputFile, error) { return e.callerSide().Create(name) }

// writeFile writes the caller's file name with write, through createFile:
// name is then complete, or untouched if write or a step after it fails.
// It returns write's count.
func (e *env) writeFile(name string, write func(io.Writer) (int, error)) (n int, err error) {
	f, err := e.createFile(name)
	if err != nil {
		return 0, err
	}
	defer f.Close() // removes the temporary file unless committed
	w := bufio.NewWriterSize(f, backupBuffer)
	if n, err = write(w); err != nil {
		return n, err
	}
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, f.Commit()
}
