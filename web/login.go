package web

import (
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/views"
)

// handleLoginPage shows the sign-in form; before the first account exists it sends people
// to make it.
func (s *Server) handleLoginPage(c echo.Context) error {
	if s.auth.Mode != AuthLocal {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	people, err := s.db.HasPeople(c.Request().Context())
	if err != nil {
		return err
	}
	if !people {
		return c.Redirect(http.StatusSeeOther, "/signup")
	}
	return page(c, http.StatusOK, views.LoginPage(views.LoginData{Next: safeNext(c.QueryParam("next")), Signup: s.auth.Signup}))
}

// handleLogin checks a name and password. Failures are limited per name and per address;
// a success starts a new session (a new id, whatever cookie came in) and ends the old one.
func (s *Server) handleLogin(c echo.Context) error {
	if s.auth.Mode != AuthLocal {
		return agent.Errorf(agent.ENOTFOUND, "Not found.")
	}
	ctx := c.Request().Context()
	name, pw, next := strings.TrimSpace(c.FormValue("name")), c.FormValue("password"), safeNext(c.FormValue("next"))
	nameKey, ipKey := "name:"+strings.ToLower(name), "ip:"+s.clientIP(c.Request())
	if wait := max(s.logins.wait(nameKey), s.logins.wait(ipKey)); wait > 0 {
		return tooMany("Too many failed sign-ins.", wait)
	}
	u, hash, err := s.db.UserByName(ctx, name)
	ok := false
	switch {
	case agent.ErrorCode(err) == agent.ENOTFOUND:
		agent.PasswordMatchesNoAccount(pw)
	case err != nil:
		return err
	default:
		ok = u.Role != agent.RoleService && agent.PasswordMatches(hash, pw)
	}
	if !ok {
		s.logins.take(nameKey)
		s.logins.take(ipKey)
		s.log.Info("sign-in failed", "name", name, "ip", s.clientIP(c.Request()))
		return page(c, http.StatusUnauthorized, views.LoginPage(views.LoginData{Name: name, Next: next, Signup: s.auth.Signup,
			Error: "That name and password do not match an account."}))
	}
	s.logins.reset(nameKey)
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// startSession ends the session the request came with, if any, and starts a new one.
func (s *Server) startSession(c echo.Context, u agent.User) error {
	ctx := c.Request().Context()
	if old := sessionToken(c.Request()); old != "" {
		if err := s.db.DeleteSession(ctx, old); err != nil {
			return err
		}
	}
	token, err := s.db.CreateSession(ctx, u.ID, s.auth.Session)
	if err != nil {
		return err
	}
	s.setSessionCookie(c, token)
	s.log.Info("signed in", "user", u.Name, "ip", s.clientIP(c.Request()))
	return nil
}

// handleLogout ends the session.
func (s *Server) handleLogout(c echo.Context) error {
	if token := sessionToken(c.Request()); token != "" {
		if err := s.db.DeleteSession(c.Request().Context(), token); err != nil {
			return err
		}
	}
	s.setSessionCookie(c, "")
	return c.Redirect(http.StatusSeeOther, "/login")
}

// signupOpen reports whether an account can be made here now: sign-up is on, or nobody
// has an account yet (the first becomes staff).
func (s *Server) signupOpen(c echo.Context) (open, first bool, err error) {
	people, err := s.db.HasPeople(c.Request().Context())
	if err != nil {
		return false, false, err
	}
	return s.auth.Mode == AuthLocal && (s.auth.Signup || !people), !people, nil
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
	return page(c, status, views.SignupPage(views.SignupData{First: first, Closed: !open}))
}

// handleSignup makes an account and signs it in. Mistakes come back per field, the name
// kept (never the password).
func (s *Server) handleSignup(c echo.Context) error {
	open, first, err := s.signupOpen(c)
	if err != nil {
		return err
	}
	if !open {
		return page(c, http.StatusForbidden, views.SignupPage(views.SignupData{Closed: true}))
	}
	name, pw, confirm := strings.TrimSpace(c.FormValue("name")), c.FormValue("password"), c.FormValue("confirm")
	d := views.SignupData{Name: name, First: first, Errors: map[string]string{}}
	if err := agent.CheckUserName(name); err != nil {
		d.Errors["name"] = agent.ErrorMessage(err)
	}
	if err := agent.CheckPassword(pw); err != nil {
		d.Errors["password"] = agent.ErrorMessage(err)
	} else if pw != confirm {
		d.Errors["confirm"] = "The two passwords differ."
	}
	if len(d.Errors) > 0 {
		return page(c, http.StatusUnprocessableEntity, views.SignupPage(d))
	}
	if ok, wait := s.signups.take("ip:" + s.clientIP(c.Request())); !ok {
		return tooMany("Too many new accounts from your address.", wait)
	}
	hash, err := agent.HashPassword(pw)
	if err != nil {
		return err
	}
	u, err := s.db.CreateUser(c.Request().Context(), name, hash, "")
	if agent.ErrorCode(err) == agent.ECONFLICT {
		d.Errors["name"] = agent.ErrorMessage(err)
		return page(c, http.StatusUnprocessableEntity, views.SignupPage(d))
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
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
