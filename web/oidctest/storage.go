package oidctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const accessTokenLifetime = time.Hour

// storage implements op.Storage (plus op.CanSetUserinfoFromRequest) in memory.
type storage struct {
	issuer string

	mu           sync.Mutex
	users        map[string]*User // by username
	bySubject    map[string]string
	clients      map[string]*Client
	authRequests map[string]*authRequest
	codes        map[string]string // code -> auth request id
	tokens       map[string]*accessToken
	keys         []*rsaKey                   // the last one signs
	tamper       func(claims map[string]any) // one-shot change of the next ID token
	logouts      map[string]int
	failing      map[string]int // status by path (see Provider.Fail)
}

var (
	_ op.Storage                   = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest = (*storage)(nil)
)

func newStorage(users []User, clients []Client) (*storage, error) {
	if len(clients) == 0 {
		return nil, errors.New("oidctest: at least one client is needed")
	}
	s := &storage{
		users:        map[string]*User{},
		bySubject:    map[string]string{},
		clients:      map[string]*Client{},
		authRequests: map[string]*authRequest{},
		codes:        map[string]string{},
		tokens:       map[string]*accessToken{},
		logouts:      map[string]int{},
	}
	for _, u := range users {
		if u.Username == "" {
			return nil, errors.New("oidctest: user without username")
		}
		if u.Subject == "" {
			u.Subject = u.Username
		}
		if _, dup := s.users[u.Username]; dup {
			return nil, fmt.Errorf("oidctest: duplicate user %q", u.Username)
		}
		if _, dup := s.bySubject[u.Subject]; dup {
			return nil, fmt.Errorf("oidctest: duplicate subject %q", u.Subject)
		}
		u.Groups = slices.Clone(u.Groups)
		s.users[u.Username] = &u
		s.bySubject[u.Subject] = u.Username
	}
	for _, c := range clients {
		if c.ID == "" || len(c.RedirectURIs) == 0 {
			return nil, errors.New("oidctest: a client needs an ID and a redirect URI")
		}
		if _, dup := s.clients[c.ID]; dup {
			return nil, fmt.Errorf("oidctest: duplicate client %q", c.ID)
		}
		c.RedirectURIs = slices.Clone(c.RedirectURIs)
		c.PostLogoutRedirectURIs = slices.Clone(c.PostLogoutRedirectURIs)
		s.clients[c.ID] = &c
	}
	k, err := newRSAKey()
	if err != nil {
		return nil, err
	}
	s.keys = []*rsaKey{k}
	return s, nil
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ---- runtime controls ----

func (s *storage) setUserGroups(username string, groups []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[username]
	if !ok {
		return fmt.Errorf("oidctest: user %q: %w", username, errNotFound)
	}
	u.Groups = slices.Clone(groups)
	return nil
}

func (s *storage) setTamper(f func(map[string]any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tamper = f
}

func (s *storage) takeTamper() func(map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.tamper
	s.tamper = nil
	return f
}

func (s *storage) setIDTokenLifetime(clientID string, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		return fmt.Errorf("oidctest: client %q: %w", clientID, errNotFound)
	}
	c.IDTokenLifetime = d
	return nil
}

func (s *storage) logoutCount(username string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logouts[username]
}

// ---- login ----

// checkLogin is called by the login page. On success it binds the user to the auth
// request and marks it done, so /authorize/callback issues the code.
func (s *storage) checkLogin(authRequestID, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.authRequests[authRequestID]
	if !ok {
		return errors.New("this sign-in request is unknown or has expired")
	}
	u, ok := s.users[username]
	if !ok || u.Password != password {
		return errors.New("wrong username or password")
	}
	req.subject = u.Subject
	req.authTime = time.Now()
	req.done = true
	return nil
}

func (s *storage) authRequestExists(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.authRequests[id]
	return ok
}

// ---- tokens ----

type accessToken struct {
	id       string
	clientID string
	subject  string
	audience []string
	scopes   []string
	expires  time.Time
}

func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	t := &accessToken{
		id:       randomID(),
		subject:  r.GetSubject(),
		audience: r.GetAudience(),
		scopes:   r.GetScopes(),
		expires:  time.Now().Add(accessTokenLifetime),
	}
	if ar, ok := r.(*authRequest); ok {
		t.clientID = ar.clientID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[t.id] = t
	return t.id, t.expires, nil
}

// Refresh tokens are not offered: clients are registered with the
// authorization_code grant only, so the op never calls these.
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, oidc.ErrUnsupportedGrantType()
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.tokens, id)
		}
	}
	if username, ok := s.bySubject[userID]; ok {
		s.logouts[username]++
	}
	return nil
}

func (s *storage) RevokeToken(_ context.Context, tokenOrTokenID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[tokenOrTokenID]; ok {
		if t.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
		}
		delete(s.tokens, tokenOrTokenID)
	}
	return nil
}

// ---- clients ----

func (s *storage) GetClientByClientID(_ context.Context, clientID string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		return nil, errors.New("client not found")
	}
	cc := *c // a snapshot: the op uses it for one request only
	return &opClient{c: &cc, loginURL: s.issuer + pathLogin}, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, clientID, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok || c.Secret == "" || c.Secret != secret {
		return errors.New("invalid client credentials")
	}
	return nil
}

// ---- claims ----

// SetUserinfoFromScopes is deprecated in op; the ID token claims come from
// SetUserinfoFromRequest below.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills the ID token claims. op.CreateIDToken calls it with
// the requested scopes; when an access token is issued alongside (always, in the
// code flow) it first strips profile/email/phone/address unless the client's
// IDTokenUserinfoClaimsAssertion() is true. Custom scopes like "groups" are never
// stripped. Whatever is set here lands in the ID token (Claims map included).
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, r op.IDTokenRequest, scopes []string) error {
	return s.setUserinfo(info, r.GetSubject(), scopes)
}

// SetUserinfoFromToken fills the /userinfo response.
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expires) {
		return errors.New("access token invalid or expired")
	}
	return s.setUserinfo(info, t.subject, t.scopes)
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expires) || !slices.Contains(t.audience, clientID) {
		return errors.New("token inactive")
	}
	info := new(oidc.UserInfo)
	if err := s.setUserinfo(info, subject, t.scopes); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = t.scopes
	resp.ClientID = t.clientID
	resp.Expiration = oidc.FromTime(t.expires)
	return nil
}

// GetPrivateClaimsFromScopes is only used for JWT access tokens (not issued here).
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, userID, _ string, scopes []string) (map[string]any, error) {
	if !slices.Contains(scopes, ScopeGroups) {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[s.bySubject[userID]]; ok {
		return map[string]any{ClaimGroups: slices.Clone(u.Groups)}, nil
	}
	return nil, nil
}

func (s *storage) setUserinfo(info *oidc.UserInfo, subject string, scopes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[s.bySubject[subject]]
	if !ok {
		return errors.New("user not found")
	}
	// Subject must always be set: IDTokenClaims.SetUserInfo copies it over "sub".
	info.Subject = u.Subject
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeProfile:
			info.PreferredUsername = u.Username
			info.Name = u.Name
		case oidc.ScopeEmail:
			info.Email = u.Email
			info.EmailVerified = oidc.Bool(u.Email != "")
		case ScopeGroups:
			groups := slices.Clone(u.Groups)
			if groups == nil {
				groups = []string{} // always an array, never null
			}
			info.AppendClaims(ClaimGroups, groups)
		}
	}
	return nil
}

// ---- unused grants ----

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("private_key_jwt / JWT profile not supported")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grant not supported")
}

func (s *storage) Health(context.Context) error { return nil }

// ---- op.Client ----

type opClient struct {
	c        *Client
	loginURL string
}

var _ op.Client = (*opClient)(nil)

func (c *opClient) GetID() string                    { return c.c.ID }
func (c *opClient) RedirectURIs() []string           { return c.c.RedirectURIs }
func (c *opClient) PostLogoutRedirectURIs() []string { return c.c.PostLogoutRedirectURIs }

func (c *opClient) ApplicationType() op.ApplicationType {
	if c.c.Secret == "" {
		return op.ApplicationTypeUserAgent
	}
	return op.ApplicationTypeWeb
}

func (c *opClient) AuthMethod() oidc.AuthMethod {
	if c.c.Secret == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic // form post is accepted too (Config.AuthMethodPost)
}

func (c *opClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

func (c *opClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode}
}

// LoginURL is where /authorize sends the browser, with the auth request id.
func (c *opClient) LoginURL(id string) string {
	return c.loginURL + "?" + queryAuthRequestID + "=" + id
}

func (c *opClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }

func (c *opClient) IDTokenLifetime() time.Duration {
	if c.c.IDTokenLifetime == 0 {
		return DefaultIDTokenLifetime
	}
	return c.c.IDTokenLifetime
}

// DevMode allows http:// redirect URIs for public (user agent) clients; a
// confidential web client may use http:// redirect URIs with the code flow anyway.
func (c *opClient) DevMode() bool { return true }

func (c *opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

func (c *opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

// IsScopeAllowed decides which non-standard scopes survive the authorize request;
// op silently drops any other custom scope.
func (c *opClient) IsScopeAllowed(scope string) bool { return scope == ScopeGroups }

// IDTokenUserinfoClaimsAssertion true keeps profile and email claims in the ID
// token even though an access token is issued too.
func (c *opClient) IDTokenUserinfoClaimsAssertion() bool { return !c.c.ProfileClaimsOnlyInUserinfo }

func (c *opClient) ClockSkew() time.Duration { return 0 }

func (s *storage) tamperArmed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tamper != nil
}
