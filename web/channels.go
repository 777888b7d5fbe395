package web

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// channelsData is the channels of a person (userID) or a group (groupID) as their section
// shows them, posting to action.
func (s *Server) channelsData(ctx context.Context, id, action string, userID, groupID int64) (views.ChannelsData, error) {
	chs, err := s.groups.Channels(ctx, userID, groupID)
	return views.ChannelsData{ID: id, Action: action, Channels: chs, Email: s.email}, err
}

// addChannel adds the channel the form holds; a refusal is returned as EINVALID. A URL must
// lead where the operator's network rule allows; an email address is mailed the link that
// confirms it.
func (s *Server) addChannel(c echo.Context, userID, groupID int64) error {
	kind := domain.ChannelKind(c.FormValue("kind"))
	target := strings.TrimSpace(c.FormValue("target"))
	if kind == domain.ChannelPush {
		return domain.Errorf(domain.EINVALID, "A device is added by “Notify this device”, on the device.")
	}
	if kind == domain.ChannelEmail && !s.email {
		return domain.Errorf(domain.EINVALID, "Parley cannot send email yet: the operator has not set up an SMTP server ([smtp] in the config file).")
	}
	if kind == domain.ChannelWebhook || kind == domain.ChannelNtfy {
		if err := s.networks.CheckURL(target, false); err != nil {
			return domain.Errorf(domain.EINVALID, "That address is refused: %s.", err.Error())
		}
	}
	ch := domain.Channel{Kind: kind, Target: target, UserID: userID, GroupID: groupID}
	if kind == domain.ChannelNtfy {
		ch.Secret = strings.TrimSpace(c.FormValue("token"))
	}
	ch, err := s.groups.AddChannel(c.Request().Context(), ch, currentUser(c).Name)
	if err != nil || kind != domain.ChannelEmail {
		return err
	}
	return s.sendConfirmation(c, ch.ID, userID, groupID)
}

// sendConfirmation mails a new confirmation link to an email channel not yet confirmed: a
// few an hour per person, so that nobody floods an address through Parley's mail server.
func (s *Server) sendConfirmation(c echo.Context, id, userID, groupID int64) error {
	ctx := c.Request().Context()
	if ok, wait := s.confirmMails.take(fmt.Sprint(currentUser(c).ID)); !ok {
		return tooMany(fmt.Sprintf("You have had %d confirmation links sent this hour.", confirmMailsPerHour), wait)
	}
	ch, token, err := s.groups.ConfirmToken(ctx, id, userID, groupID)
	if err != nil {
		return err
	}
	if err := s.notifier.Confirm(ctx, ch.Target, cmp.Or(s.publicURL, s.baseURL(c.Request()))+"/channels/confirm?token="+token); err != nil {
		s.log.Warn("confirmation mail", "channel", id, "error", err)
		return domain.Errorf(domain.EINVALID, "The address is added, but the link that confirms it could not be sent (%s): send it again once that is mended.", err.Error())
	}
	return nil
}

// confirmMailsPerHour is how many confirmation links a person may have sent in an hour.
const confirmMailsPerHour = 5

// removeChannel removes the channel the form names.
func (s *Server) removeChannel(c echo.Context, userID, groupID int64) error {
	id, err := strconv.ParseInt(c.FormValue("id"), 10, 64)
	if err != nil {
		return domain.ErrNoChannel
	}
	return s.groups.RemoveChannel(c.Request().Context(), id, userID, groupID, currentUser(c).Name)
}

// confirmAgain sends the link that confirms the address of the channel the form names again.
func (s *Server) confirmAgain(c echo.Context, userID, groupID int64) error {
	id, err := strconv.ParseInt(c.FormValue("id"), 10, 64)
	if err != nil {
		return domain.ErrNoChannel
	}
	return s.sendConfirmation(c, id, userID, groupID)
}

// handleConfirmAgain sends one of the person's addresses its link again.
func (s *Server) handleConfirmAgain(c echo.Context) error {
	return s.settingsChannel(c, s.confirmAgain(c, currentUser(c).ID, 0), "channels")
}

// handleAddChannel adds a channel of the person's own.
func (s *Server) handleAddChannel(c echo.Context) error {
	return s.settingsChannel(c, s.addChannel(c, currentUser(c).ID, 0), "channels")
}

func (s *Server) handleRemoveChannel(c echo.Context) error {
	return s.settingsChannel(c, s.removeChannel(c, currentUser(c).ID, 0), "channels")
}

// settingsChannel goes back to the settings' section after a change of channels, or shows
// them with the refusal and what was typed.
func (s *Server) settingsChannel(c echo.Context, err error, section string) error {
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/settings#"+section)
	}
	status := refusalStatus(err)
	if status == 0 {
		return err
	}
	d, derr := s.settingsData(c, currentUser(c))
	if derr != nil {
		return derr
	}
	if section == "devices" {
		d.Devices.Error = domain.ErrorMessage(err)
	} else {
		d.Channels.Error, d.Channels.Kind, d.Channels.Target = domain.ErrorMessage(err), c.FormValue("kind"), strings.TrimSpace(c.FormValue("target"))
	}
	return s.page(c, status, views.SettingsPage(d))
}

// refusalStatus is the status a refused change of channels is shown with, on its form: 422 for
// what was given, 429 for too many; zero for anything else (an error page).
func refusalStatus(err error) int {
	switch domain.ErrorCode(err) {
	case domain.EINVALID:
		return http.StatusUnprocessableEntity
	case domain.ETOOMANY:
		return http.StatusTooManyRequests
	}
	return 0
}

// groupChannel changes a group's channels (change: add, remove or confirm again) and shows
// the groups again.
func (s *Server) groupChannel(c echo.Context, change func(echo.Context, int64, int64) error) error {
	ctx := c.Request().Context()
	g, err := s.groups.Group(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	err = change(c, 0, g.ID)
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/review/groups#group-"+g.Name)
	}
	status := refusalStatus(err)
	if status == 0 {
		return err
	}
	return s.groupsPageWith(c, status, "", nil, func(d *views.GroupsData) {
		ch := d.Channels[g.Name]
		ch.Error, ch.Kind, ch.Target = domain.ErrorMessage(err), c.FormValue("kind"), strings.TrimSpace(c.FormValue("target"))
		d.Channels[g.Name] = ch
	})
}

func (s *Server) handleAddGroupChannel(c echo.Context) error { return s.groupChannel(c, s.addChannel) }
func (s *Server) handleRemoveGroupChannel(c echo.Context) error {
	return s.groupChannel(c, s.removeChannel)
}
func (s *Server) handleConfirmGroupChannel(c echo.Context) error {
	return s.groupChannel(c, s.confirmAgain)
}
