// Package oidctest runs a real OpenID Connect provider (github.com/zitadel/oidc/v3/pkg/op)
// on 127.0.0.1 over plain http, for tests and for browser tests.
//
// It serves discovery, /authorize (code flow, PKCE S256), /oauth/token, /userinfo,
// /keys, /end_session (RP-initiated logout) and a minimal username/password login
// page at /login. Users, clients and signing keys live in memory. A test can change
// a user's groups, rotate the signing key, change a client's ID token lifetime and
// make the next ID token carry a wrong audience while the provider runs.
//
// The ID token carries sub, preferred_username, name, email, email_verified and
// groups (array of strings) when the scopes openid profile email groups are asked for.
package oidctest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ScopeGroups is the scope that makes the provider put the groups claim in the
// ID token and the userinfo response.
const ScopeGroups = "groups"

// ClaimGroups is the name of the groups claim (a JSON array of strings).
const ClaimGroups = "groups"

// DefaultIDTokenLifetime is used for a client whose IDTokenLifetime is zero.
const DefaultIDTokenLifetime = time.Hour

// User is an account that can sign in on the login page.
type User struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Name     string   `json:"name"`  // display name, "name" claim
	Email    string   `json:"email"` // "email" claim; email_verified is true when set
	Groups   []string `json:"groups"`
	// Subject is the "sub" claim; it defaults to Username.
	Subject string `json:"subject,omitempty"`
}

// Client is a registered relying party.
type Client struct {
	ID string `json:"id"`
	// Secret is the client secret (HTTP Basic or form post). An empty Secret makes a
	// public client (token_endpoint_auth_method none), which must use PKCE.
	Secret                 string   `json:"secret"`
	RedirectURIs           []string `json:"redirect_uris"`
	PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris"`
	// IDTokenLifetime is how long an ID token is valid (exp = now + lifetime).
	// Zero means DefaultIDTokenLifetime; a negative value issues tokens that are
	// already expired.
	IDTokenLifetime time.Duration `json:"id_token_lifetime"`
	// ProfileClaimsOnlyInUserinfo leaves preferred_username, name and email out of
	// the ID token (they stay in userinfo), as many providers do by default.
	// The groups claim still goes into the ID token.
	ProfileClaimsOnlyInUserinfo bool `json:"profile_claims_only_in_userinfo,omitempty"`
}

// Options configures Start.
type Options struct {
	Users   []User
	Clients []Client
	// Addr is the listen address; "" means 127.0.0.1:0 (a random port).
	Addr string
	// ControlAPI mounts POST endpoints under /oidctest/ that do what the Provider's
	// methods do (for browser tests that run the provider as its own process).
	ControlAPI bool
}

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is the issuer URL, e.g. http://127.0.0.1:41234 (no trailing slash).
	Issuer string

	op      *op.Provider
	storage *storage
	server  *http.Server
	done    chan struct{}
}

// Start starts a provider listening on opts.Addr (default 127.0.0.1:0).
// Call Close when done.
func Start(opts Options) (*Provider, error) {
	st, err := newStorage(opts.Users, opts.Clients)
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	issuer := "http://" + ln.Addr().String()
	st.issuer = issuer

	// CryptoKey encrypts authorization codes and opaque access tokens (AES-256-GCM):
	// it must be exactly 32 bytes.
	var cryptoKey [32]byte
	if _, err := rand.Read(cryptoKey[:]); err != nil {
		ln.Close()
		return nil, err
	}
	config := &op.Config{
		CryptoKey:                cryptoKey,
		CryptoKeyId:              "oidctest",
		DefaultLogoutRedirectURI: issuer + pathLoggedOut,
		CodeMethodS256:           true,
		AuthMethodPost:           true,
		SupportedScopes:          []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail, ScopeGroups},
		SupportedClaims:          append(slices.Clone(op.DefaultSupportedClaims), ClaimGroups),
	}
	provider, err := op.NewProvider(config, st, op.StaticIssuer(issuer),
		// an http:// issuer is refused (ErrInvalidIssuerHTTPS) without this
		op.WithAllowInsecure(),
	)
	if err != nil {
		ln.Close()
		return nil, err
	}

	mux := http.NewServeMux()
	issuerCtx := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.Handle(pathLogin, issuerCtx.Handler(&loginHandler{storage: st, callbackURL: op.AuthCallbackURL(provider)}))
	mux.HandleFunc(pathLoggedOut, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><title>Signed out</title><p>You are signed out.</p>")
	})
	p := &Provider{Issuer: issuer, op: provider, storage: st, done: make(chan struct{})}
	if opts.ControlAPI {
		mux.Handle("/oidctest/", controlHandler(p))
	}
	mux.Handle("/", tamperTokenResponse(st, provider)) // discovery, authorize, token, userinfo, keys, end_session, ...

	p.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.server.Serve(ln)
	}()
	return p, nil
}

// Close stops the server and closes its connections.
func (p *Provider) Close() {
	_ = p.server.Close()
	<-p.done
}

// Shutdown stops the server gracefully.
func (p *Provider) Shutdown(ctx context.Context) error {
	err := p.server.Shutdown(ctx)
	<-p.done
	return err
}

// SetUserGroups replaces the groups of a user. Tokens issued afterwards carry them.
func (p *Provider) SetUserGroups(username string, groups []string) error {
	return p.storage.setUserGroups(username, groups)
}

// RotateKey makes a new RSA signing key (a new "kid") the one that signs tokens.
// With keepOld the previous keys stay in the JWKS (tokens signed with them still
// verify); without it the JWKS holds only the new key. It returns the new key id.
func (p *Provider) RotateKey(keepOld bool) (string, error) {
	return p.storage.rotateKey(keepOld)
}

// Fail makes the endpoint at path (PathToken, PathKeys) answer status from now on: a
// provider partly down. Status 0 puts it back.
func (p *Provider) Fail(path string, status int) {
	p.storage.fail(path, status)
}

// KeyIDs returns the key ids in the JWKS; the last one signs new tokens.
func (p *Provider) KeyIDs() []string {
	return p.storage.keyIDs()
}

// IssueWrongAudienceOnce makes the ID token in the next successful token response
// (for any client) carry aud = audience (default "some-other-client") instead of
// the client id: a misbehaving provider. The token is validly signed.
func (p *Provider) IssueWrongAudienceOnce(audience ...string) {
	if len(audience) == 0 {
		audience = []string{"some-other-client"}
	}
	aud := slices.Clone(audience)
	p.TamperNextIDToken(func(claims map[string]any) { claims["aud"] = aud })
}

// TamperNextIDToken lets f rewrite the claims of the ID token in the next
// successful token response (for any client); the token is then re-signed with
// the current key, so only the claims are wrong. Use it for any misbehaviour:
// claims["iss"], claims["nonce"], delete(claims, "groups"), ...
//
// (zitadel's op always adds the client id to aud and checks the client id of
// the code, so a wrong audience cannot come from the storage.)
func (p *Provider) TamperNextIDToken(f func(claims map[string]any)) {
	p.storage.setTamper(f)
}

// SetIDTokenLifetime changes the lifetime of the ID tokens issued to a client from
// now on; a negative value issues already expired tokens, zero the default.
func (p *Provider) SetIDTokenLifetime(clientID string, lifetime time.Duration) error {
	return p.storage.setIDTokenLifetime(clientID, lifetime)
}

// Handler is the provider's whole http.Handler (login page included).
func (p *Provider) Handler() http.Handler { return p.server.Handler }

// LogoutCount reports how many RP-initiated logouts (end_session) ended a session
// of the user (by username) so far.
func (p *Provider) LogoutCount(username string) int {
	return p.storage.logoutCount(username)
}

var errNotFound = errors.New("not found")
