//go:build !linux

package main

import (
	"errors"
	"io/fs"
	"net"
)

// adminSocketSupported: without Linux's SO_PEERCRED the server cannot
// tell who connected, so the admin socket is off by default and
// -admin-socket PATH is refused.
const adminSocketSupported = false

// errAdminSocketUnsupported says why.
var errAdminSocketUnsupported = errors.New("the admin socket needs Linux (SO_PEERCRED)")

// maxSocketPath is the longest socket path of the BSDs and macOS.
const maxSocketPath = 103

// peerUID fails: the peer cannot be known.
func peerUID(*net.UnixConn) (int, error) { return -1, errAdminSocketUnsupported }

// fileOwner fails: a socket's owner is not checked.
func fileOwner(fs.FileInfo) (int, bool) { return -1, false }
