package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The provider's signing keys: the newest signs, those kept verify (RotateKey).
type rsaKey struct {
	id  string
	key *rsa.PrivateKey
}

func newRSAKey() (*rsaKey, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return &rsaKey{id: randomID(), key: k}, nil
}

// op.SigningKey
type signingKey struct{ *rsaKey }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

// op.Key (public half, for the JWKS)
type publicKey struct{ *rsaKey }

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return signingKey{s.keys[len(s.keys)-1]}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]op.Key, 0, len(s.keys))
	for _, k := range s.keys {
		keys = append(keys, publicKey{k})
	}
	return keys, nil
}

func (s *storage) rotateKey(keepOld bool) (string, error) {
	k, err := newRSAKey() // outside the lock: this takes a while
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if keepOld {
		s.keys = append(s.keys, k)
	} else {
		s.keys = []*rsaKey{k}
	}
	return k.id, nil
}

func (s *storage) keyIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.keys))
	for i, k := range s.keys {
		ids[i] = k.id
	}
	return ids
}
