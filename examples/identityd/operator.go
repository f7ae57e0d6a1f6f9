package main

import (
	"context"
	"os/user"
	"strconv"

	"github.com/identitylib/identity"
)

// The commands of identityd are an operator's: the audit trail records
// them under the operator's user id on the host. A command that runs in
// this process is the process's (its effective user id); one that came
// through serve's admin socket is the client's, whose user id the kernel
// told the server (SO_PEERCRED, which gives the effective user id too).

// operatorActor is the actor of the commands of the operator whose user
// id on the host is uid: the uid, and the user's name, or the uid again
// when the host has no name for it.
func operatorActor(uid int) identity.Actor {
	id := strconv.Itoa(uid)
	display := id
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		display = u.Username
	}
	return identity.Actor{Kind: identity.ActorOperator, ID: id, Display: display}
}

// operatorContext returns the context in which the command cmd of the
// operator uid runs: its library calls name the operator as their actor.
// serve's names none: what the server does of itself (sweeps, rotations
// on the way) is the system's, and each request names its own actor.
func operatorContext(ctx context.Context, cmd command, uid int) context.Context {
	if cmd.name == "serve" {
		return ctx
	}
	return identity.WithActor(ctx, operatorActor(uid))
}
