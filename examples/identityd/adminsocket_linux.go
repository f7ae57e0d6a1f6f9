package main

import (
	"errors"
	"io/fs"
	"net"
	"syscall"
)

// adminSocketSupported: Linux has SO_PEERCRED, with which the server
// learns who connected.
const adminSocketSupported = true

// errAdminSocketUnsupported is not returned on Linux.
var errAdminSocketUnsupported = errors.New("the admin socket is supported")

// maxSocketPath is the longest socket path: sun_path holds 108 bytes,
// the last a NUL.
const maxSocketPath = 107

// peerUID returns the user id of the process at the other end of conn,
// as the kernel recorded it when the connection was made (or, for a
// client, when the server listened).
func peerUID(conn *net.UnixConn) (int, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if credErr != nil {
		return -1, credErr
	}
	return int(cred.Uid), nil
}

// fileOwner returns the user id that owns the file of fi.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}
