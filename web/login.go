package web

import (
	"context"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// handleLoginPage shows the sign-in form; before the first account exists it sends people
// to make it.
func (s *Server) handleLoginPage(c echo.Context) error {
	if s.auth.Mode == AuthOIDC {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return s.page(c, http.StatusOK, views.ProviderLoginPage(views.ProviderLoginData{Provider: s.oidc.opts.ProviderName,
			Next: safeNext(c.QueryParam("next")), SignedOut: c.QueryParam("signed_out") != ""}))
	}
	if s.auth.Mode != AuthLocal {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	people, err := s.accounts.HasPeople(c.Request().Context())
	if err != nil {
		return err
	}
	if !people {
		return c.Redirect(http.StatusSeeOther, "/signup")
	}
	return s.page(c, http.StatusOK, views.LoginPage(views.LoginData{Next: safeNext(c.QueryParam("next")), Signup: s.auth.Signup}))
}

// handleLogin checks a name and password. Failures are limited per name and per address;
// a success starts a new session (a new id, whatever cookie came in) and ends the old one.
func (s *Server) handleLogin(c echo.Context) error {
	if s.auth.Mode != AuthLocal {
		return domain.ErrNotFound
	}
	name, pw, next := strings.TrimSpace(c.FormValue("name")), c.FormValue("password"), safeNext(c.FormValue("next"))
	u, ok, err := s.passwordAttempt(c, name, pw, "Too many failed sign-ins.")
	if domain.ErrorCode(err) == domain.ETOOMANY {
		s.metrics.signinLimited.Inc()
	}
	if err != nil {
		return err
	}
	if !ok {
		s.metrics.signinPassword.Inc()
		s.log.Info("sign-in failed", "name", name, "ip", s.clientIP(c.Request()))
		return s.page(c, http.StatusUnauthorized, views.LoginPage(views.LoginData{Name: name, Next: next, Signup: s.auth.Signup,
			Error: "That name and password do not match an account."}))
	}
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// startSession ends the session the request came with, if any, and starts a new one.
func (s *Server) startSession(c echo.Context, u domain.User) error {
	return s.startSessionWith(c, u, "")
}

// startSessionWith is startSession for a sign-in through the identity provider, whose ID
// token the session keeps for signing out of the provider too.
func (s *Server) startSessionWith(c echo.Context, u domain.User, idToken string) error {
	ctx := c.Request().Context()
	if old := s.sessionToken(c.Request()); old != "" {
		if err := s.accounts.DeleteSession(ctx, old); err != nil {
			return err
		}
		s.live.changed()
	}
	token, err := s.ids.CreateSessionWith(ctx, u.ID, s.auth.Session, idToken)
	if err != nil {
		return err
	}
	s.setSessionCookie(c, token)
	s.log.Info("signed in", "user", u.Name, "ip", s.clientIP(c.Request()))
	return nil
}

// handleLogout ends the session. The cookie goes even when the session's row cannot be
// deleted (a full disk): the browser is signed out, and the error says the session stands.
// Signed in through an identity provider that has an end_session_endpoint, the browser goes
// there next (RP-initiated logout, with the session's ID token), and comes back to Parley's
// sign-in page: the next visit asks the provider again.
func (s *Server) handleLogout(c echo.Context) error {
	s.setSessionCookie(c, "")
	next := "/login"
	if token := s.sessionToken(c.Request()); token != "" {
		ctx := c.Request().Context()
		if s.oidc != nil {
			idToken, err := s.ids.SessionIDToken(ctx, token)
			if err != nil {
				s.log.Error("sign-out: the session's ID token", "error", err)
			}
			if u := s.oidc.logoutURL(idToken); u != "" {
				next = u
			} else {
				next = "/login?signed_out=1"
			}
		}
		if err := s.accounts.DeleteSession(ctx, token); err != nil {
			return err
		}
		s.live.changed()
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// signupOpen reports whether an account can be made here now: sign-up is on, or (with
// sign-up off) nobody has an account yet and the request comes from this machine. The first
// account becomes staff.
func (s *Server) signupOpen(c echo.Context) (open, first bool, err error) {
	people, err := s.accounts.HasPeople(c.Request().Context())
	if err != nil {
		return false, false, err
	}
	local := LoopbackHost(s.clientIP(c.Request()))
	return s.auth.Mode == AuthLocal && (s.auth.Signup || (!people && local)), !people, nil
}

func (s *Server) handleSignupPage(c echo.Context) error {
	open, first, err := s.signupOpen(c)
	if err != nil {
		return err
	}
	if !open && s.auth.Mode != AuthLocal {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	status := http.StatusOK
	if !open {
		status = http.StatusForbidden
	}
	return s.page(c, status, views.SignupPage(views.SignupData{First: first, Closed: !open}))
}

// handleSignup makes an account and signs it in. Mistakes come back per field, the name
// kept (never the password).
func (s *Server) handleSignup(c echo.Context) error {
	open, first, err := s.signupOpen(c)
	if err != nil {
		return err
	}
	if !open {
		return s.page(c, http.StatusForbidden, views.SignupPage(views.SignupData{Closed: true}))
	}
	name, pw, confirm := strings.TrimSpace(c.FormValue("name")), c.FormValue("password"), c.FormValue("confirm")
	d := views.SignupData{Name: name, First: first, Errors: map[string]string{}}
	if err := domain.CheckUserName(name); err != nil {
		d.Errors["name"] = domain.ErrorMessage(err)
	}
	checkNewPassword(pw, confirm, d.Errors)
	if len(d.Errors) > 0 {
		return s.page(c, http.StatusUnprocessableEntity, views.SignupPage(d))
	}
	if ok, wait := s.signups.take("ip:" + s.clientIP(c.Request())); !ok {
		return tooMany("Too many new accounts from your address.", wait)
	}
	hash, err := s.hashPassword(c.Request().Context(), pw)
	if err != nil {
		return err
	}
	u, err := s.accounts.CreateUser(c.Request().Context(), name, hash, "")
	if code := domain.ErrorCode(err); code == domain.ECONFLICT || code == domain.EINVALID {
		d.Errors["name"] = domain.ErrorMessage(err)
		return s.page(c, http.StatusUnprocessableEntity, views.SignupPage(d))
	}
	if err != nil {
		return err
	}
	s.log.Info("account made", "user", u.Name, "role", u.Role)
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

// clientIP is the address a request came from: the peer, or when the peer is a trusted
// proxy, the address it appended to X-Forwarded-For.
func (s *Server) clientIP(r *http.Request) string {
	if s.fromTrustedProxy(r) {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			hops := strings.Split(xff[len(xff)-1], ",")
			if ip := strings.TrimSpace(hops[len(hops)-1]); ip != "" {
				return ip
			}
		}
	}
	return peerHost(r)
}

// addressKey is what sign-in attempts are counted by: an IPv4 address, or an IPv6 /64 (one
// machine commonly holds a whole /64).
func addressKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil || addr.Unmap().Is4() {
		return ip
	}
	p, _ := addr.Prefix(64)
	return p.String()
}

// passwordAttempt checks the password of the account name, as one attempt counted against
// the name and the client's address (past the limit: tooMany, with the message given). An
// attempt is paid for before the password is checked, so that many at once cannot all pass;
// a success gives the name's back. An unknown name costs the time a wrong password does.
func (s *Server) passwordAttempt(c echo.Context, name, pw, tooManyMsg string) (domain.User, bool, error) {
	ctx := c.Request().Context()
	nameKey, ipKey := "name:"+strings.ToLower(name), "ip:"+addressKey(s.clientIP(c.Request()))
	// The address pays only for an attempt the name may make, and gives the name's token
	// back when it may not: attempts at once on other instances are counted as made.
	if ok, wait := s.logins.take(nameKey); !ok {
		return domain.User{}, false, tooMany(tooManyMsg, wait)
	}
	if ok, wait := s.logins.take(ipKey); !ok {
		s.logins.refund(nameKey)
		return domain.User{}, false, tooMany(tooManyMsg, wait)
	}
	u, hash, err := s.accounts.UserByName(ctx, name)
	if err != nil && domain.ErrorCode(err) != domain.ENOTFOUND {
		return u, false, err
	}
	ok := false
	if herr := s.hashing(ctx, func() {
		if err != nil || u.Role == domain.RoleService || hash == "" {
			s.passwords.MatchesNoAccount(pw) // the same time as a wrong password
			return
		}
		ok = domain.PasswordMatches(hash, pw)
	}); herr != nil {
		return u, false, herr
	}
	if ok {
		s.logins.reset(nameKey)
		s.logins.refund(ipKey)
	}
	return u, ok, nil
}

// checkNewPassword puts in errs what is wrong with a new password and its confirmation.
func checkNewPassword(pw, confirm string, errs map[string]string) {
	if err := domain.CheckPassword(pw); err != nil {
		errs["password"] = domain.ErrorMessage(err)
	} else if pw != confirm {
		errs["confirm"] = "The two passwords differ."
	}
}

// hashPassword hashes a new password in one of the hashing slots.
func (s *Server) hashPassword(ctx context.Context, pw string) (hash string, err error) {
	if herr := s.hashing(ctx, func() { hash, err = s.passwords.Hash(pw) }); herr != nil {
		return "", herr
	}
	return hash, err
}

// hashing runs fn, an argon2id computation (64 MiB each), when one of a few slots is free,
// so that a burst of sign-ins cannot take all the memory; it gives up when ctx ends.
func (s *Server) hashing(ctx context.Context, fn func()) error {
	select {
	case s.hashSlots <- struct{}{}:
		defer func() { <-s.hashSlots }()
		fn()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
