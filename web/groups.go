package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// handleGroups is the staff page of groups.
func (s *Server) handleGroups(c echo.Context) error {
	return s.groupsPage(c, http.StatusOK, "", nil)
}

// groupsPage shows the groups, with the error of a change refused (about group).
func (s *Server) groupsPage(c echo.Context, status int, group string, err error) error {
	return s.groupsPageWith(c, status, group, err, nil)
}

// groupsPageWith is groupsPage, with edit changing what it shows.
func (s *Server) groupsPageWith(c echo.Context, status int, group string, err error, edit func(*views.GroupsData)) error {
	if err != nil && domain.ErrorCode(err) != domain.EINVALID && domain.ErrorCode(err) != domain.ENOTFOUND {
		return err
	}
	ctx := c.Request().Context()
	groups, gerr := s.groups.Groups(ctx)
	if gerr != nil {
		return gerr
	}
	d := views.GroupsData{Groups: groups, Group: group, Channels: map[string]views.ChannelsData{}}
	for _, g := range groups {
		ch, err := s.channelsData(ctx, "channels-"+g.Name, "/review/groups/"+g.Name+"/channels", 0, g.ID)
		if err != nil {
			return err
		}
		d.Channels[g.Name] = ch
	}
	if err != nil {
		d.Error = domain.ErrorMessage(err)
	}
	if edit != nil {
		edit(&d)
	}
	return s.page(c, status, views.GroupsPage(d))
}

// people reads a list of names: commas or spaces between them.
func people(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
}

// groupChanged shows the page after a change: back to it (303), or with the refusal (422).
func (s *Server) groupChanged(c echo.Context, group string, err error) error {
	if err != nil {
		return s.groupsPage(c, http.StatusUnprocessableEntity, group, err)
	}
	return c.Redirect(http.StatusSeeOther, "/review/groups#group-"+group)
}

func (s *Server) handleAddGroup(c echo.Context) error {
	group := strings.TrimSpace(c.FormValue("group"))
	_, err := s.groups.AddToGroup(c.Request().Context(), group, people(c.FormValue("people")), domain.RoleMember, currentUser(c).Name)
	if err != nil {
		group = ""
	}
	return s.groupChanged(c, group, err)
}

func (s *Server) handleAddToGroup(c echo.Context) error {
	group, role := c.Param("name"), domain.GroupRole(c.FormValue("role"))
	_, err := s.groups.AddToGroup(c.Request().Context(), group, people(c.FormValue("people")), role, currentUser(c).Name)
	return s.groupChanged(c, group, err)
}

func (s *Server) handleRemoveFromGroup(c echo.Context) error {
	group := c.Param("name")
	err := s.groups.RemoveFromGroup(c.Request().Context(), group, []string{c.FormValue("person")}, currentUser(c).Name)
	return s.groupChanged(c, group, err)
}

func (s *Server) handleDeleteGroup(c echo.Context) error {
	group := c.Param("name")
	if err := s.groups.RemoveFromGroup(c.Request().Context(), group, nil, currentUser(c).Name); err != nil {
		return s.groupChanged(c, group, err)
	}
	return c.Redirect(http.StatusSeeOther, "/review/groups")
}
