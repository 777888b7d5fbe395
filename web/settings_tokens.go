package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/views"
)

// handleCreateToken makes a personal access token and shows it, this once, on the settings
// page itself: the token never travels in a URL (no redirect carries it), and no cache
// keeps the page. A refused name comes back next to the field, as typed. The page focuses
// the new token, or the refused name (so the form's action has no #fragment, which would
// stop the browser's autofocus).
func (s *Server) handleCreateToken(c echo.Context) error {
	u := currentUser(c)
	if u.Role == domain.RoleService {
		return domain.ErrNotFound
	}
	name := strings.TrimSpace(c.FormValue("name"))
	secret, _, cerr := s.tokens.CreateToken(c.Request().Context(), u.ID, name)
	if code := domain.ErrorCode(cerr); cerr != nil && code != domain.EINVALID && code != domain.ECONFLICT {
		return cerr
	}
	// The page as it stands now: with the new token, or with the name refused.
	d, err := s.settingsData(c, u)
	if err != nil {
		return err
	}
	d.TokenName = name
	if cerr != nil {
		d.Errors["token_name"] = domain.ErrorMessage(cerr)
		return s.page(c, http.StatusUnprocessableEntity, views.SettingsPage(d))
	}
	d.NewToken, d.NewTokenName, d.TokenName = secret, d.TokenName, ""
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.page(c, http.StatusCreated, views.SettingsPage(d))
}

// handleRevokeToken revokes one of the person's own tokens, by name: the token's requests
// are refused from now on and its open API streams end at once.
func (s *Server) handleRevokeToken(c echo.Context) error {
	u := currentUser(c)
	if u.Role == domain.RoleService {
		return domain.ErrNotFound
	}
	name := c.FormValue("name")
	t, err := s.tokens.RevokeToken(c.Request().Context(), u.ID, name)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		d, derr := s.settingsData(c, u)
		if derr != nil {
			return derr
		}
		d.Errors["revoke"] = domain.ErrorMessage(err)
		return s.page(c, http.StatusNotFound, views.SettingsPage(d))
	}
	if err != nil {
		return err
	}
	s.live.changed()
	return c.Redirect(http.StatusSeeOther, "/settings?saved=revoked&name="+url.QueryEscape(t.Name)+"#tokens")
}

// accessTokens lists a person's tokens for their settings page.
func (s *Server) accessTokens(ctx context.Context, userID int64) ([]views.AccessToken, error) {
	list, err := s.tokens.Tokens(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]views.AccessToken, len(list))
	for i, t := range list {
		out[i] = views.AccessToken{Name: t.Name, Created: t.Created, LastUsed: t.LastUsed}
	}
	return out, nil
}

// revokedNotice says which token was revoked. The name comes from the URL, so only a name
// a token could have is repeated.
func revokedNotice(name string) string {
	if store.CheckTokenName(name) != nil {
		return "Token revoked."
	}
	return "Token “" + name + "” revoked."
}
