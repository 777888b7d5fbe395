package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/static"
	"github.com/parley-chat/parley/views"
)

// routes is the one flat route table.
func (s *Server) routes() {
	views.AssetVersion = static.Version()
	e := s.echo
	e.Use(s.logRequests, s.recoverPanics, s.limitBody)
	e.GET("/healthz", s.handleHealth)
	e.GET("/static/*", s.handleStatic)
	e.GET("/", s.handleHome)
	e.POST("/conversations", s.handleCreateConversation)
	e.GET("/c/:id", s.handleConversation)
	e.GET("/c/:id/stream", s.handleStream)
	e.POST("/c/:id/messages", s.handleSendMessage)
	e.POST("/c/:id/retry", s.handleRetry)
	e.GET("/c/:id/documents/:doc", s.handleDocument)
	e.POST("/questions/:id/answer", s.handleAnswer)
	e.POST("/questions/:id/decline", s.handleDecline)
	e.POST("/questions/:id/cancel", s.handleCancel)
	if s.a2a != nil {
		s.a2aRoutes()
	}
}

func (s *Server) handleHealth(c echo.Context) error {
	if err := s.db.Ping(c.Request().Context()); err != nil {
		return c.String(http.StatusServiceUnavailable, "database unavailable\n")
	}
	return c.String(http.StatusOK, "ok\n")
}

func (s *Server) handleStatic(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return echo.WrapHandler(http.StripPrefix("/static/", http.FileServerFS(static.FS)))(c)
}
