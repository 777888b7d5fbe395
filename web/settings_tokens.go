package web

import (
	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
)

// handleCreateToken makes a personal access token (to be written).
func (s *Server) handleCreateToken(c echo.Context) error {
	return agent.Errorf(agent.ENOTFOUND, "Not found.")
}

// handleRevokeToken revokes a personal access token (to be written).
func (s *Server) handleRevokeToken(c echo.Context) error {
	return agent.Errorf(agent.ENOTFOUND, "Not found.")
}
