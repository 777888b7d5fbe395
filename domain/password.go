package domain

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password limits: at least 10 characters, and passphrases up to 1,024 bytes.
const (
	MinPasswordRunes = 10
	MaxPasswordBytes = 1024
)

// argon2id parameters besides the cost.
const (
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// PasswordHasher hashes new passwords with argon2id at its cost: passes and memory. A hash
// records its cost, and is checked at it, so changing the cost changes nothing stored.
type PasswordHasher struct {
	Time      uint32
	MemoryKiB uint32

	dummy sync.Once
	// dummyHash is checked against when a sign-in names no account, so that the answer takes
	// as long as for a wrong password and does not tell which names exist.
	dummyHash string
}

// Passwords hashes at RFC 9106's second recommended option, with 64 MiB: 126 ms and 64 MiB
// a hash on one core here (go test -bench HashPassword ./agent). Tests use a cheaper one.
var Passwords = &PasswordHasher{Time: 3, MemoryKiB: 64 * 1024}

// CheckPassword says what is wrong with a new password, if anything.
func CheckPassword(pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordRunes:
		return Errorf(EINVALID, "Choose a password of at least %d characters (a passphrase of a few words is best).", MinPasswordRunes)
	case len(pw) > MaxPasswordBytes:
		return Errorf(EINVALID, "A password has at most %d bytes.", MaxPasswordBytes)
	case !utf8.ValidString(pw):
		return Errorf(EINVALID, "A password must be text.")
	}
	return nil
}

// HashPassword hashes a password at the default cost (Passwords).
func HashPassword(pw string) (string, error) { return Passwords.Hash(pw) }

// Hash hashes a password with argon2id and a random salt, in the PHC string format
// ($argon2id$v=19$m=65536,t=3,p=1$salt$hash), so that parameters can change later.
func (h *PasswordHasher) Hash(pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, h.Time, h.MemoryKiB, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.MemoryKiB, h.Time, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// PasswordMatches reports whether pw is the password hash was made from. An empty or
// malformed hash matches nothing.
func PasswordMatches(hash, pw string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || len(pw) > MaxPasswordBytes {
		return false
	}
	var version int
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil || mem == 0 || iters == 0 || threads == 0 || mem > 1<<21 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// MatchesNoAccount spends the time of one password check at h's cost and reports false.
func (h *PasswordHasher) MatchesNoAccount(pw string) bool {
	h.dummy.Do(func() { h.dummyHash, _ = h.Hash("parley-no-such-account") })
	PasswordMatches(h.dummyHash, pw)
	return false
}
