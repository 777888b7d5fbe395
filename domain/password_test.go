package domain_test

import (
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestPassword(t *testing.T) {
	long := strings.Repeat("correct horse battery staple ", 30) // a passphrase of 870 bytes
	for _, pw := range []string{"ten chars!", "a passphrase of several words", long} {
		if err := domain.CheckPassword(pw); err != nil {
			t.Fatalf("CheckPassword(%.20q) = %v", pw, err)
		}
		h, err := domain.HashPassword(pw)
		if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=1$") {
			t.Fatalf("hash = %q, %v", h, err)
		}
		if !domain.PasswordMatches(h, pw) || domain.PasswordMatches(h, pw+"x") {
			t.Fatalf("PasswordMatches is wrong for %.20q", pw)
		}
		if h2, _ := domain.HashPassword(pw); h2 == h {
			t.Fatal("two hashes of one password are equal: no salt")
		}
	}
	for _, bad := range []string{"", "$argon2id$v=19$m=65536,t=3,p=1$$", "$argon2i$v=19$m=65536,t=3,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=99999999,t=3,p=1$c2FsdA$aGFzaA"} {
		if domain.PasswordMatches(bad, "anything at all") {
			t.Errorf("malformed hash %q matches", bad)
		}
	}
	for pw, want := range map[string]string{"short": "at least 10", strings.Repeat("x", 1025): "at most 1024", "caf\xe9 au lait!!": "must be text"} {
		if err := domain.CheckPassword(pw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPassword(%.20q) = %v, want %q", pw, err, want)
		}
	}
}

// BenchmarkHashPassword is the cost of one sign-in check (argon2id, 64 MiB, 3 passes).
func BenchmarkHashPassword(b *testing.B) {
	for b.Loop() {
		domain.HashPassword("correct horse battery staple")
	}
}

// A hash records its cost: one made cheaply (as in tests) is checked at that cost.
func TestPasswordHasher_Cost(t *testing.T) {
	cheap := &domain.PasswordHasher{Time: 1, MemoryKiB: 64}
	h, err := cheap.Hash("correct horse battery staple")
	if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash = %q, %v", h, err)
	}
	if !domain.PasswordMatches(h, "correct horse battery staple") || domain.PasswordMatches(h, "wrong horse battery staple") {
		t.Fatal("PasswordMatches is wrong for a cheap hash")
	}
	if cheap.MatchesNoAccount("anything") {
		t.Fatal("MatchesNoAccount matched")
	}
}
