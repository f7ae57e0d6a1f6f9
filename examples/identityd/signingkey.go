package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
)

// kekEnv names the environment variable that holds the key-encryption key
// of signing keys: 64 hex digits (32 bytes). Every command that opens the
// database reads it, so that serve and signing-key rotate seal and open
// keys alike.
const kekEnv = "IDENTITYD_KEY_ENCRYPTION_KEY"

// tokenOptions completes opts with what every command shares for tokens:
// the JWS signer and the key-encryption key of $IDENTITYD_KEY_ENCRYPTION_KEY.
func tokenOptions(opts *identity.Options) (*identity.Options, error) {
	if opts == nil {
		opts = &identity.Options{}
	}
	opts.TokenSigner = jws.Signer{}
	if v := os.Getenv(kekEnv); v != "" {
		kek, err := hex.DecodeString(v)
		if err != nil || len(kek) != identity.KeyEncryptionKeySize {
			return nil, fmt.Errorf("$%s must be %d hex digits (a %d-byte key)", kekEnv, 2*identity.KeyEncryptionKeySize, identity.KeyEncryptionKeySize)
		}
		opts.KeyEncryptionKey = kek
	}
	return opts, nil
}

// signingKeyRotate rotates the workspace's token signing keys at once and
// prints the id of the key that now signs: identityd signing-key rotate
// -workspace SLUG [-alg RS256|ES256].
func signingKeyRotate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	alg := fs.String("alg", identity.RS256, "the `ALGORITHM` of the new next key: RS256 or ES256 (the key that starts signing now was made at the previous rotation)")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	return e.inWorkspaceWith(ctx, *slug, &identity.Options{SigningAlgorithm: *alg}, func(ws *identity.Workspace) error {
		k, err := ws.RotateSigningKey(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, k.ID)
		return nil
	})
}
