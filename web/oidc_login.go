package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/views"
)

// handleOIDCLogin sends the browser to the provider to sign in: a new state, nonce and PKCE
// verifier, kept in the database (for whichever instance the browser comes back to) with
// where to go after. While the provider's discovery document could not be read, it says so
// (503), and Parley keeps trying.
func (s *Server) handleOIDCLogin(c echo.Context) error {
	if s.oidc == nil {
		return domain.ErrNotFound
	}
	if err := s.allowProviderSignIn(c, s.providerSignIns); err != nil {
		return err
	}
	d, err := s.oidc.ready()
	if err != nil {
		s.log.Warn("sign-in: the identity provider cannot be reached", "issuer", s.oidc.opts.Issuer, "error", err)
		return s.signInProblem(c, &refusal{status: http.StatusServiceUnavailable,
			problem: fmt.Sprintf("Parley cannot reach %s to sign you in right now.", s.oidc.opts.ProviderName),
			hint:    "Parley keeps trying by itself: try again in a minute. If it goes on, tell the operator."})
	}
	browser := signInCookie.read(s, c.Request())
	if browser == "" {
		browser = randomToken()
	}
	l := store.PendingLogin{State: randomToken(), Browser: browser, Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(), Next: safeNext(c.QueryParam("next"))}
	if err := s.ids.StartLogin(c.Request().Context(), l); err != nil {
		return err
	}
	signInCookie.set(s, c, browser, store.LoginFor)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.Redirect(http.StatusSeeOther, d.config.AuthCodeURL(l.State, oidc.Nonce(l.Nonce), oauth2.S256ChallengeOption(l.Verifier)))
}

// handleOIDCCallback is where the provider sends the browser back. The sign-in must be one
// this browser started and has not used (state); the code is exchanged with its PKCE
// verifier; the ID token must be the provider's, for Parley, unexpired, with the sign-in's
// nonce. Anything else is a 400 page that says why, the log says what was refused, and
// nobody is signed in. Then the account is found (or made) by the provider's issuer and
// subject, its groups and role set as the provider says, and a session starts.
func (s *Server) handleOIDCCallback(c echo.Context) error {
	if s.oidc == nil {
		return domain.ErrNotFound
	}
	if err := s.allowProviderSignIn(c, s.providerCallbacks); err != nil {
		return err
	}
	err := s.oidcSignIn(c)
	var r *refusal
	if errors.As(err, &r) {
		s.log.Warn("sign-in refused", "issuer", s.oidc.opts.Issuer, "reason", r.log, "ip", s.clientIP(c.Request()))
		s.metrics.signinRefused.Inc()
		return s.signInProblem(c, r)
	}
	return err
}

func (s *Server) oidcSignIn(c echo.Context) error {
	ctx, q := c.Request().Context(), c.QueryParams()
	state := q.Get("state")
	var l store.PendingLogin
	if state != "" {
		var err error
		l, err = s.ids.TakeLogin(ctx, state, signInCookie.read(s, c.Request()))
		if domain.ErrorCode(err) == domain.ENOTFOUND {
			return &refusal{http.StatusBadRequest, "This sign-in was not started here, or it was used already.", "Start again from Parley's sign-in page.",
				"state: " + domain.ErrorMessage(err)}
		}
		if err != nil {
			return err
		}
	}
	if e := q.Get("error"); e != "" && state != "" {
		// The provider's own words, only on a sign-in this browser started.
		why := q.Get("error_description")
		if why == "" {
			why = e
		}
		return &refusal{http.StatusBadRequest, fmt.Sprintf("%s did not sign you in: %s", s.oidc.opts.ProviderName, why), "", "provider error: " + e + ": " + why}
	}
	if state == "" || q.Get("code") == "" {
		return &refusal{http.StatusBadRequest, "This is not a sign-in Parley started.", "Start again from Parley's sign-in page.", "callback without state or code"}
	}
	// The provider out of reach is no refusal: the sign-in is kept for the browser to come
	// back with (reload the page), and the page says so.
	unreachable := func(err error) error {
		if serr := s.ids.StartLogin(context.WithoutCancel(ctx), l); serr != nil {
			s.log.Error("sign-in: keep it for another try", "error", serr)
		}
		return &refusal{http.StatusServiceUnavailable, fmt.Sprintf("Parley cannot reach %s to finish signing you in.", s.oidc.opts.ProviderName),
			"Reload this page in a minute to try again.", "provider: " + err.Error()}
	}
	d, err := s.oidc.ready()
	if err != nil {
		return unreachable(err)
	}
	tok, err := d.config.Exchange(s.oidc.ctx(ctx), q.Get("code"), oauth2.VerifierOption(l.Verifier))
	var refused *oauth2.RetrieveError
	switch {
	case errors.As(err, &refused) && refused.Response != nil && refused.Response.StatusCode >= 500:
		return unreachable(err) // the provider failed, it did not refuse
	case errors.As(err, &refused):
		return &refusal{http.StatusBadRequest, fmt.Sprintf("%s refused the sign-in code: it may have been used already, or have expired.", s.oidc.opts.ProviderName),
			"Sign in again.", "code exchange: " + err.Error()}
	case err != nil:
		return unreachable(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return &refusal{http.StatusBadRequest, fmt.Sprintf("%s sent no ID token.", s.oidc.opts.ProviderName), "The scopes must include openid: tell the operator.", "no id_token in the token response"}
	}
	idt, err := d.verifier.Verify(s.oidc.ctx(ctx), raw)
	if err != nil && strings.Contains(err.Error(), "fetching keys") {
		// The provider's keys could not be read. The code is spent: another try is a new
		// sign-in (the page's button).
		return &refusal{http.StatusServiceUnavailable, fmt.Sprintf("Parley cannot reach %s to finish signing you in.", s.oidc.opts.ProviderName),
			"Sign in again in a minute.", "provider keys: " + err.Error()}
	}
	if err != nil {
		return badToken(err)
	}
	if idt.Nonce != l.Nonce {
		return &refusal{http.StatusBadRequest, "The sign-in answer belongs to another sign-in than this one.", "Start again from Parley's sign-in page.", "id token nonce does not match the sign-in's"}
	}
	id, err := s.identity(idt)
	if err != nil {
		return err
	}
	in, err := s.ids.SignInIdentity(ctx, id, domain.SourceOIDC)
	switch domain.ErrorCode(err) {
	case "":
	case domain.ECONFLICT, domain.EINVALID:
		return &refusal{http.StatusConflict, fmt.Sprintf("You cannot have the account name %q here: %s", id.Name, domain.ErrorMessage(err)),
			"Nobody was signed in and no account was made. Ask the operator, who can rename the account that has it.", fmt.Sprintf("name %q for %s: %v", id.Name, id.Subject, err)}
	case domain.EFORBIDDEN:
		return &refusal{http.StatusForbidden, domain.ErrorMessage(err), "", err.Error()}
	default:
		return err
	}
	if in.Created || len(in.Joined) > 0 || len(in.Left) > 0 || in.Role != "" {
		s.log.Info("signed in through the identity provider", "user", in.User.Name, "made", in.Created, "joined", strings.Join(in.Joined, ","),
			"left", strings.Join(in.Left, ","), "role", in.User.Role)
		s.live.changed() // their open pages draw what is theirs now
	}
	signInCookie.clear(c)
	if err := s.startSessionWith(c, in.User, raw); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, safeNext(l.Next))
}

// identity reads who the provider says signed in: issuer and subject, the name claim, the
// groups claim (a list, or one string of names separated by commas), and staff by
// the staff group.
func (s *Server) identity(idt *oidc.IDToken) (domain.Identity, error) {
	o := s.oidc.opts
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return domain.Identity{}, &refusal{http.StatusBadRequest, "The sign-in answer could not be read.", "", "claims: " + err.Error()}
	}
	id := domain.Identity{Issuer: idt.Issuer, Subject: idt.Subject}
	if err := json.Unmarshal(claims[o.NameClaim], &id.Name); err != nil || strings.TrimSpace(id.Name) == "" {
		return id, &refusal{http.StatusBadRequest, fmt.Sprintf("%s did not say your user name (the claim %s).", o.ProviderName, o.NameClaim),
			"The operator can name another claim with --oidc-name-claim (email, for Google).", "no " + o.NameClaim + " claim for " + idt.Subject}
	}
	id.Name = strings.TrimSpace(id.Name)
	if o.NameClaim == "email" {
		// An address names an account only once the provider checked it is the person's.
		var verified bool
		if err := json.Unmarshal(claims["email_verified"], &verified); err != nil || !verified {
			return id, &refusal{http.StatusBadRequest, fmt.Sprintf("%s has not verified your email address, which names your account here.", o.ProviderName),
				"Verify it there, then sign in again.", "email_verified is not true for " + idt.Subject}
		}
	}
	if err := domain.CheckUserName(id.Name); err != nil {
		return id, &refusal{http.StatusBadRequest, fmt.Sprintf("Your user name at %s, %q, is not one Parley takes: %s", o.ProviderName, id.Name, domain.ErrorMessage(err)),
			"The operator can name another claim with --oidc-name-claim.", fmt.Sprintf("name claim %q: %v", id.Name, err)}
	}
	raw, named := claims[o.GroupsClaim]
	if named {
		var list []string
		var one string
		if json.Unmarshal(raw, &list) != nil && json.Unmarshal(raw, &one) == nil {
			list = domain.SplitList(one)
		}
		var refused []string
		id.Groups, refused = domain.ProviderGroups(list)
		if id.Groups == nil {
			id.Groups = []string{}
		}
		if len(refused) > 0 {
			s.log.Warn("sign-in: groups whose names Parley cannot take are left out", "user", id.Name, "groups", strings.Join(refused, ", "))
		}
	} else if _, over := claims["_claim_names"]; over {
		// Entra ID names no groups past 200 of them, only where to read them: the groups
		// stay as they were.
		s.log.Warn("sign-in: the provider sent the groups elsewhere (too many for the token): groups left as they were", "user", id.Name)
	} else {
		id.Groups = []string{} // none named: the provider's groups are left
	}
	if o.StaffGroup != "" && id.Groups != nil {
		// Only by groups known: when they are not (the overage), the role stays as it was.
		staff := slices.ContainsFunc(id.Groups, func(g string) bool { return strings.EqualFold(g, o.StaffGroup) })
		id.Staff = &staff
	}
	return id, nil
}

// signInProblem answers with the page of a refused or failed sign-in.
func (s *Server) signInProblem(c echo.Context, r *refusal) error {
	title := "Sign-in refused"
	if r.status == http.StatusServiceUnavailable {
		title = "Sign-in unavailable"
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return s.page(c, r.status, views.SignInProblemPage(views.SignInProblemData{Provider: s.oidc.opts.ProviderName, Title: title, Problem: r.problem, Hint: r.hint,
		Retry: r.status != http.StatusConflict && r.status != http.StatusForbidden}))
}

// allowProviderSignIn spends one of the address's sign-ins through the provider of the
// minute (Limits.ProviderSignIns, begun and come back, each counted apart), or says when to
// try again.
func (s *Server) allowProviderSignIn(c echo.Context, l limiter) error {
	if ok, wait := l.take("ip:" + addressKey(s.clientIP(c.Request()))); !ok {
		return tooMany("Too many sign-ins from your address.", wait)
	}
	return nil
}
