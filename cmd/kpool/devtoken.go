package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
)

// devFolder is kpool dev's data folder: the folder of its SQLite database,
// or kpool's data folder with another database. It keeps, between runs,
// the kubeconfigs, the dev token and where the emulators listened.
func devFolder(database string) string {
	if path, ok := strings.CutPrefix(database, "sqlite:"); ok && path != "" {
		return filepath.Dir(path)
	}
	return filepath.Join(dataDir(), "kpool")
}

// devStem names the files kpool dev keeps for a database: the SQLite
// file's name without its extension ("dev" for dev.db), or for another
// database "dev-" and a digest of its address, so that databases sharing a
// folder keep their own.
func devStem(database string) string {
	if path, ok := strings.CutPrefix(database, "sqlite:"); ok && path != "" {
		base := filepath.Base(path)
		if s := strings.TrimSuffix(base, filepath.Ext(base)); s != "" {
			return s
		}
	}
	sum := sha256.Sum256([]byte(database))
	return "dev-" + hex.EncodeToString(sum[:4])
}

// devTokenFile is where kpool dev keeps its token between runs (only the
// user may read it; the database keeps only its hash). It also serves as
// a context's --token-file.
func devTokenFile(database string) string {
	return filepath.Join(devFolder(database), devStem(database)+".token")
}

// devCreatedBy marks the tokens kpool dev makes.
const devCreatedBy = "kpool dev"

// devRenewBefore is how long before it expires the kept token is replaced:
// one that ran out during a session would break the user's shell again.
const devRenewBefore = 24 * time.Hour

// devTokenUse is the token of a kpool dev run: the secret, once, for the
// banner; its record; and whether it is the previous run's, else why not.
type devTokenUse struct {
	Secret string
	Token  *kpool.Token
	Same   bool
	// Why a new token was made ("" the first time): for the banner.
	Why string
}

// devToken returns owner's dev token kept in file when it still works,
// or makes one and keeps it there; every other token kpool dev made is
// revoked, so that they do not pile up.
func devToken(ctx context.Context, st kpool.Store, owner, file string, now time.Time) (*devTokenUse, error) {
	ts, ok := st.(kpool.TokenStore)
	if !ok {
		return nil, fmt.Errorf("the dev store keeps no tokens")
	}
	use, err := keptToken(ctx, ts, owner, file, now)
	if err != nil {
		return nil, err
	}
	if !use.Same {
		secret, t, err := createToken(ctx, ts, auth.TokenRequest{User: owner, Role: kpool.RoleUser, CreatedBy: devCreatedBy,
			Expires: kpool.RoleUser.DefaultLifetime()}, now)
		if err != nil {
			return nil, err
		}
		if err := writeSecretFile(file, secret); err != nil {
			return nil, fmt.Errorf("kpool dev: keeping the dev token: %w", err)
		}
		use.Secret, use.Token = secret, t
	}
	old, err := ts.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range old {
		if t.CreatedBy == devCreatedBy && t.RevokedAt == nil && t.ID != use.Token.ID {
			if err := ts.RevokeToken(ctx, t.ID, now); err != nil {
				return nil, err
			}
		}
	}
	return use, nil
}

// keptToken reads the token file: Same when its token still works for
// owner for more than devRenewBefore, else why it is not used.
func keptToken(ctx context.Context, ts kpool.TokenStore, owner, file string, now time.Time) (*devTokenUse, error) {
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &devTokenUse{}, nil
	case err != nil:
		return nil, fmt.Errorf("kpool dev: reading the dev token: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if !auth.LooksLikeToken(secret) {
		return &devTokenUse{Why: "the file held no kpool token"}, nil
	}
	if info, err := os.Stat(file); err == nil && runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return &devTokenUse{Why: fmt.Sprintf("the old one's file was readable by others (mode %04o)", info.Mode().Perm())}, nil
	}
	t, err := ts.TokenByHash(ctx, auth.HashToken(secret))
	switch {
	case kpool.IsNotFound(err):
		return &devTokenUse{Why: "the old one is not in this database"}, nil
	case err != nil:
		return nil, err
	}
	why := ""
	switch {
	case t.CreatedBy != devCreatedBy || t.Role != kpool.RoleUser:
		why = "the file held a token kpool dev did not make"
	case t.Usable(now) != "":
		why = "the old one was " + t.Usable(now)
	case !strings.EqualFold(t.User, owner):
		why = fmt.Sprintf("the old one was %s's, not %s's", t.User, owner)
	case t.ExpiresAt != nil && t.ExpiresAt.Sub(now) < devRenewBefore:
		why = "the old one expires within a day"
	}
	if why != "" {
		return &devTokenUse{Why: why}, nil
	}
	return &devTokenUse{Secret: secret, Token: t, Same: true}, nil
}

// writeSecretFile writes secret to path, readable by the user only, in
// one step (a new file renamed over the old one).
func writeSecretFile(path, secret string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.WriteString(secret + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
