package web

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// settingsData is the settings page of u as stored, with their access tokens.
func (s *Server) settingsData(c echo.Context, u domain.User) (views.SettingsData, error) {
	d := views.SettingsData{Name: u.Name, DisplayName: u.DisplayName, TimeZone: u.TimeZone, Errors: map[string]string{},
		Passwords: s.auth.Mode == AuthLocal, Tokens: u.Role != domain.RoleService}
	d.Theme = themeOf(c.Request())
	if d.Tokens {
		var err error
		if d.AccessTokens, err = s.accessTokens(c.Request().Context(), u.ID); err != nil {
			return d, err
		}
		if d.Channels, err = s.channelsData(c.Request().Context(), "channels", "/settings/channels", u.ID, 0); err != nil {
			return d, err
		}
		// The devices are the channels of kind push; the section of channels shows the others.
		all := d.Channels.Channels
		d.Channels.Channels = nil
		for _, ch := range all {
			if ch.Kind == domain.ChannelPush {
				d.Devices.Devices = append(d.Devices.Devices, ch)
			} else {
				d.Channels.Channels = append(d.Channels.Channels, ch)
			}
		}
		prefs, err := s.groups.NotifyPrefs(c.Request().Context(), u.ID)
		if err != nil {
			return d, err
		}
		d.Prefs = s.prefsData(c, u, prefs)
	}
	return d, nil
}

func (s *Server) handleSettings(c echo.Context) error {
	d, err := s.settingsData(c, currentUser(c))
	if err != nil {
		return err
	}
	switch c.QueryParam("saved") {
	case "":
	case "password":
		d.Saved = "Your password is changed; you were signed out everywhere else."
	case "revoked":
		d.TokenNotice = revokedNotice(c.QueryParam("name"))
	case "notifications":
		d.Prefs.Saved = true // said beside the form, where the page lands
	default:
		d.Saved = "Saved."
	}
	return s.page(c, http.StatusOK, views.SettingsPage(d))
}

// handleSaveSettings stores the display name and time zone, and sets this browser's theme.
func (s *Server) handleSaveSettings(c echo.Context) error {
	u := currentUser(c)
	d, err := s.settingsData(c, u)
	if err != nil {
		return err
	}
	raw := c.FormValue("display_name")
	d.DisplayName = domain.CleanName(raw)
	d.TimeZone = strings.TrimSpace(c.FormValue("time_zone"))
	d.Theme = c.FormValue("theme")
	if err := domain.NameText.CheckChars(raw); err != nil {
		d.DisplayName, d.Errors["display_name"] = raw, domain.ErrorMessage(err)
	} else if err := domain.NameText.Check(d.DisplayName); err != nil {
		d.Errors["display_name"] = domain.ErrorMessage(err)
	}
	if d.TimeZone != "" && !validZone(d.TimeZone) {
		d.Errors["time_zone"] = "“" + d.TimeZone + "” is not a time zone: use a name such as Europe/Lisbon or America/New_York."
	}
	if d.Theme != "light" && d.Theme != "dark" {
		d.Theme = ""
	}
	if len(d.Errors) > 0 {
		return s.page(c, http.StatusUnprocessableEntity, views.SettingsPage(d))
	}
	if err := s.accounts.SetProfile(c.Request().Context(), u.ID, d.DisplayName, d.TimeZone); err != nil {
		return err
	}
	ck := &http.Cookie{Name: themeCookie, Value: d.Theme, Path: "/", MaxAge: 365 * 24 * 3600, SameSite: http.SameSiteLaxMode}
	if d.Theme == "" {
		ck.MaxAge = -1
	}
	c.SetCookie(ck)
	return c.Redirect(http.StatusSeeOther, "/settings?saved=1")
}

// handleChangePassword changes a local account's password, given the current one. Every
// other session of the account ends; this one goes on in a new session.
func (s *Server) handleChangePassword(c echo.Context) error {
	if s.auth.Mode != AuthLocal {
		return domain.ErrNotFound
	}
	ctx := c.Request().Context()
	u := currentUser(c)
	d, err := s.settingsData(c, u)
	if err != nil {
		return err
	}
	current, pw, confirm := c.FormValue("current"), c.FormValue("password"), c.FormValue("confirm")
	// Guesses of the current password count as sign-in attempts do.
	_, ok, err := s.passwordAttempt(c, u.Name, current, "Too many wrong passwords.")
	if err != nil {
		return err
	}
	if !ok {
		d.Errors["current"] = "That is not your current password."
	}
	checkNewPassword(pw, confirm, d.Errors)
	if len(d.Errors) > 0 {
		return s.page(c, http.StatusUnprocessableEntity, views.SettingsPage(d))
	}
	newHash, err := s.hashPassword(ctx, pw)
	if err != nil {
		return err
	}
	if _, err := s.accounts.SetPassword(ctx, u.Name, newHash, u.Name); err != nil {
		return err
	}
	s.live.changed() // the password's other sessions have ended
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/settings?saved=password")
}

// validZone reports whether name is an IANA time zone as browsers know them: the zone
// database's names, without its variants (posix/, right/) and files (Local, localtime,
// posixrules, Factory), which Intl refuses.
func validZone(name string) bool {
	_, ok := loadZone(name)
	return ok
}

// loadZone is the zone name names, if it is one a person may choose.
func loadZone(name string) (*time.Location, bool) {
	switch {
	case name == "" || name == "Local" || name == "localtime" || name == "posixrules" || name == "Factory",
		strings.HasPrefix(name, "posix/") || strings.HasPrefix(name, "right/"),
		strings.ContainsAny(name, " .\\") || strings.HasPrefix(name, "/"):
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	return loc, err == nil
}

// prefsData is the form of the person's notification choices: every agent they may use (and
// those outside Parley, over MCP), checked unless muted.
func (s *Server) prefsData(c echo.Context, u domain.User, p domain.NotifyPrefs) views.NotifyPrefsData {
	d := views.NotifyPrefsData{Zone: p.Quiet.Zone, Errors: map[string]string{}}
	if p.Quiet.On() {
		d.QuietFrom, d.QuietTo = domain.Clock(p.Quiet.From), domain.Clock(p.Quiet.To)
	}
	if d.Zone == "" {
		d.Zone = u.TimeZone
	}
	person, err := s.runner.PersonOf(c.Request().Context(), u)
	if err != nil {
		person = domain.Person{User: u}
	}
	for _, a := range s.runner.AgentsFor(person) {
		d.Agents = append(d.Agents, views.AgentChoice{Name: a.Name, Title: cmp.Or(a.Title, a.Name), On: !p.Mutes(a.Name)})
	}
	d.Agents = append(d.Agents, views.AgentChoice{Name: "", Title: "Agents outside Parley (over MCP)", On: !p.Mutes("")})
	return d
}

// handleSaveNotifyPrefs stores which agents' questions notify the person, and their quiet
// hours; a refusal shows the form again with what was typed.
func (s *Server) handleSaveNotifyPrefs(c echo.Context) error {
	u := currentUser(c)
	d, err := s.settingsData(c, u)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	on := map[string]bool{}
	for _, a := range form["agent"] {
		on[a] = true
	}
	before, err := s.groups.NotifyPrefs(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	var p domain.NotifyPrefs
	// A mute of an agent not on the form (one the person may not use now) stays.
	for _, m := range before.Muted {
		if !slices.ContainsFunc(d.Prefs.Agents, func(a views.AgentChoice) bool { return a.Name == m }) {
			p.Muted = append(p.Muted, m)
		}
	}
	for i, a := range d.Prefs.Agents {
		d.Prefs.Agents[i].On = on[a.Name]
		if !on[a.Name] {
			p.Muted = append(p.Muted, a.Name)
		}
	}
	from, to := strings.TrimSpace(c.FormValue("quiet_from")), strings.TrimSpace(c.FormValue("quiet_to"))
	d.Prefs.QuietFrom, d.Prefs.QuietTo, d.Prefs.Zone = from, to, strings.TrimSpace(c.FormValue("quiet_zone"))
	if from != "" || to != "" {
		f, okF := domain.ParseClock(from)
		t, okT := domain.ParseClock(to)
		switch {
		case !okF || !okT:
			d.Prefs.Errors["quiet"] = "Give both times, such as 22:00 and 07:00, or neither."
		case f == t:
			d.Prefs.Errors["quiet"] = "The quiet hours end when they start: give two different times, or neither."
		case d.Prefs.Zone == "" || !validZone(d.Prefs.Zone):
			d.Prefs.Errors["quiet"] = "Give the time zone the hours are in, such as Europe/Lisbon or America/New_York."
		}
		p.Quiet = domain.QuietHours{From: f, To: t, Zone: d.Prefs.Zone}
	}
	if len(d.Prefs.Errors) > 0 {
		return s.page(c, http.StatusUnprocessableEntity, views.SettingsPage(d))
	}
	if err := s.groups.SetNotifyPrefs(c.Request().Context(), u.ID, p, u.Name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/settings?saved=notifications#notify-prefs")
}

// handleConfirmPage is where an email's confirmation link leads: a button, since a GET
// confirms nothing (mail scanners open links).
func (s *Server) handleConfirmPage(c echo.Context) error {
	token := c.QueryParam("token")
	ch, err := s.groups.Confirmation(c.Request().Context(), token)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return s.page(c, http.StatusNotFound, views.ConfirmChannelPage("", "", domain.ErrorMessage(err), false))
	}
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, views.ConfirmChannelPage(token, ch.Target, "", false))
}

// handleConfirmChannel confirms the address whose link was followed. No sign-in: the link,
// mailed to the address, is the proof.
func (s *Server) handleConfirmChannel(c echo.Context) error {
	ch, err := s.groups.ConfirmChannel(c.Request().Context(), c.FormValue("token"))
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return s.page(c, http.StatusNotFound, views.ConfirmChannelPage("", "", domain.ErrorMessage(err), false))
	}
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, views.ConfirmChannelPage("", ch.Target, "", true))
}
