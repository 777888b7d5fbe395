package web

import (
	"context"
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

// addChannel adds the channel the form holds; a refusal is returned as EINVALID.
func (s *Server) addChannel(c echo.Context, userID, groupID int64) error {
	_, err := s.groups.AddChannel(c.Request().Context(), domain.Channel{Kind: domain.ChannelKind(c.FormValue("kind")),
		Target: c.FormValue("target"), UserID: userID, GroupID: groupID}, currentUser(c).Name)
	return err
}

func (s *Server) removeChannel(c echo.Context, userID, groupID int64) error {
	id, err := strconv.ParseInt(c.FormValue("id"), 10, 64)
	if err != nil {
		return domain.ErrNoChannel
	}
	return s.groups.RemoveChannel(c.Request().Context(), id, userID, groupID, currentUser(c).Name)
}

// handleAddChannel adds a channel of the person's own.
func (s *Server) handleAddChannel(c echo.Context) error {
	return s.settingsChannel(c, s.addChannel(c, currentUser(c).ID, 0))
}

func (s *Server) handleRemoveChannel(c echo.Context) error {
	return s.settingsChannel(c, s.removeChannel(c, currentUser(c).ID, 0))
}

// settingsChannel goes back to the settings after a change of channels, or shows them with
// the refusal and what was typed.
func (s *Server) settingsChannel(c echo.Context, err error) error {
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/settings#channels")
	}
	if domain.ErrorCode(err) != domain.EINVALID {
		return err
	}
	d, derr := s.settingsData(c, currentUser(c))
	if derr != nil {
		return derr
	}
	d.Channels.Error, d.Channels.Kind, d.Channels.Target = domain.ErrorMessage(err), c.FormValue("kind"), strings.TrimSpace(c.FormValue("target"))
	return s.page(c, http.StatusUnprocessableEntity, views.SettingsPage(d))
}

// groupChannel changes a group's channels (add, else remove) and shows the groups again.
func (s *Server) groupChannel(c echo.Context, add bool) error {
	ctx := c.Request().Context()
	g, err := s.groups.Group(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	if add {
		err = s.addChannel(c, 0, g.ID)
	} else {
		err = s.removeChannel(c, 0, g.ID)
	}
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/review/groups#group-"+g.Name)
	}
	if domain.ErrorCode(err) != domain.EINVALID {
		return err
	}
	return s.groupsPageWith(c, http.StatusUnprocessableEntity, "", nil, func(d *views.GroupsData) {
		ch := d.Channels[g.Name]
		ch.Error, ch.Kind, ch.Target = domain.ErrorMessage(err), c.FormValue("kind"), strings.TrimSpace(c.FormValue("target"))
		d.Channels[g.Name] = ch
	})
}

func (s *Server) handleAddGroupChannel(c echo.Context) error    { return s.groupChannel(c, true) }
func (s *Server) handleRemoveGroupChannel(c echo.Context) error { return s.groupChannel(c, false) }
