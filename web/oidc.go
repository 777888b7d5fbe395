package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/parley-chat/parley/domain"
	"golang.org/x/oauth2"
)

// OIDCOptions say how people sign in through the organization's OpenID Connect provider
// (AuthOIDC): the authorization code flow with PKCE (S256), a state and a nonce, the ID
// token checked against the provider's discovery document and keys.
type OIDCOptions struct {
	// Issuer is the provider's issuer URL (https://, or http:// on a loopback address);
	// ClientID and ClientSecret are Parley's as a client of it (no secret: a public client).
	Issuer, ClientID, ClientSecret string
	// Scopes are asked for (default openid profile email groups).
	Scopes []string
	// NameClaim names the account on its first sign-in (default preferred_username);
	// GroupsClaim holds the person's groups (default groups).
	NameClaim, GroupsClaim string
	// StaffGroup, when set, makes its members staff and everyone else not, at each sign-in;
	// without it, staff is whom `parley user set-role` made so.
	StaffGroup string
	// ProviderName names the provider on the sign-in page (default: the issuer's host).
	ProviderName string
	// HTTPClient talks to the provider (default: one with a 10 s timeout).
	HTTPClient *http.Client
}

func (o OIDCOptions) withDefaults() OIDCOptions {
	if len(o.Scopes) == 0 {
		o.Scopes = []string{oidc.ScopeOpenID, "profile", "email", "groups"}
	}
	if o.NameClaim == "" {
		o.NameClaim = "preferred_username"
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	if o.ProviderName == "" {
		o.ProviderName = o.Issuer
		if u, err := url.Parse(o.Issuer); err == nil && u.Host != "" {
			o.ProviderName = u.Host
		}
	}
	if o.StaffGroup != "" {
		// As the provider's groups are read at each sign-in (see domain.ProviderGroups).
		if names, _ := domain.ProviderGroups([]string{o.StaffGroup}); len(names) == 1 {
			o.StaffGroup = names[0]
		}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return o
}

// oidcClient is Parley as a client of the provider: what it read of the provider's
// discovery document once it could (Parley starts without it, and keeps trying).
type oidcClient struct {
	opts OIDCOptions
	// redirect is <public URL>/auth/oidc/callback; signedOut <public URL>/login, where the
	// provider's sign-out sends the browser back.
	redirect, signedOut string
	log                 *slog.Logger

	mu         sync.Mutex
	provider   *oidc.Provider
	verifier   *oidc.IDTokenVerifier
	endSession string
	lastErr    error
	// csp is the Content-Security-Policy of every response once the provider has an
	// end_session_endpoint: forms may go to its origin (signing out is sent on there).
	csp atomic.Pointer[string]
}

// discovered is what the provider's discovery document gave: what signing in needs.
type discovered struct {
	config     oauth2.Config
	verifier   *oidc.IDTokenVerifier
	endSession string
}

func newOIDCClient(opts OIDCOptions, publicURL string, log *slog.Logger) *oidcClient {
	base := strings.TrimRight(publicURL, "/")
	return &oidcClient{opts: opts.withDefaults(), redirect: base + "/auth/oidc/callback", signedOut: base + "/login?signed_out=1", log: log}
}

// ctx is a context whose requests go through the client's HTTP client.
func (o *oidcClient) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, o.opts.HTTPClient)
}

// discover reads the provider's discovery document until it can, or until ctx ends: at
// once, then again after 1 s, doubling to a minute between tries.
func (o *oidcClient) discover(ctx context.Context) {
	wait := time.Second
	for {
		tctx, cancel := context.WithTimeout(o.ctx(ctx), 15*time.Second)
		p, err := oidc.NewProvider(tctx, o.opts.Issuer)
		cancel()
		if err == nil {
			var doc struct {
				EndSession string `json:"end_session_endpoint"`
			}
			_ = p.Claims(&doc)
			o.mu.Lock()
			o.provider, o.endSession, o.lastErr = p, doc.EndSession, nil
			o.verifier = p.Verifier(&oidc.Config{ClientID: o.opts.ClientID})
			o.mu.Unlock()
			if origin := originOf(doc.EndSession); origin != "" {
				csp := strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+origin, 1)
				o.csp.Store(&csp)
			}
			o.log.Info("identity provider ready", "issuer", o.opts.Issuer, "end_session", doc.EndSession != "")
			return
		}
		o.mu.Lock()
		o.lastErr = err
		o.mu.Unlock()
		o.log.Warn("identity provider cannot be reached; trying again", "issuer", o.opts.Issuer, "in", wait.String(), "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

// ready returns what signing in needs, or an error while the provider's discovery document
// has not been read.
func (o *oidcClient) ready() (discovered, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider == nil {
		err := o.lastErr
		if err == nil {
			err = errors.New("not read yet")
		}
		return discovered{}, err
	}
	return discovered{
		config: oauth2.Config{ClientID: o.opts.ClientID, ClientSecret: o.opts.ClientSecret, Endpoint: o.provider.Endpoint(),
			RedirectURL: o.redirect, Scopes: o.opts.Scopes},
		verifier:   o.verifier,
		endSession: o.endSession,
	}, nil
}

// originOf is the origin of an endpoint's URL ("" for none).
func originOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// logoutURL is where the browser goes to sign out of the provider too (RP-initiated
// logout), "" when the provider has no end_session_endpoint or the session kept no ID token.
func (o *oidcClient) logoutURL(idToken string) string {
	d, err := o.ready()
	if err != nil || d.endSession == "" || idToken == "" {
		return ""
	}
	u, err := url.Parse(d.endSession)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("id_token_hint", idToken)
	q.Set("post_logout_redirect_uri", o.signedOut)
	q.Set("client_id", o.opts.ClientID)
	u.RawQuery = q.Encode()
	return u.String()
}

// randomToken is 32 random bytes, base64url: states, nonces, browser cookies.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// refusal is why a sign-in through the provider signed nobody in: what the page says, and
// what the log keeps.
type refusal struct {
	status        int
	problem, hint string
	log           string
}

func (r *refusal) Error() string { return r.log }

// badToken is the refusal of an ID token that did not pass its checks, saying which.
func badToken(err error) *refusal {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return &refusal{http.StatusBadRequest, "The sign-in answer had expired by the time it reached Parley.", "Sign in again; if it keeps happening, check that this server's clock is right.", "id token expired: " + msg}
	case strings.Contains(msg, "expected audience"):
		return &refusal{http.StatusBadRequest, "The sign-in answer was not meant for this Parley (its audience is another client).", "The provider's client for Parley may be set up wrongly: tell the operator.", "id token audience: " + msg}
	case strings.Contains(msg, "issued by a different provider"):
		return &refusal{http.StatusBadRequest, "The sign-in answer came from another provider than the one Parley trusts.", "Tell the operator.", "id token issuer: " + msg}
	}
	return &refusal{http.StatusBadRequest, "The sign-in answer did not pass Parley's checks (its signature or its form).", "Sign in again; if it keeps happening, tell the operator.", "id token: " + msg}
}
