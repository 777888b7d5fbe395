package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/static"
	"github.com/parley-chat/parley/views"
)

// routes is the one flat route table. Everything but health, static files, signing in,
// metrics and A2A (which have their own bearer tokens) needs a signed-in person; the review
// desk needs staff.
func (s *Server) routes() {
	views.AssetVersion = static.Version()
	e := s.echo
	e.Use(s.logRequests, s.recoverPanics, s.secureHeaders, s.limitBody)
	e.GET("/healthz", s.handleHealth)
	e.GET("/robots.txt", handleRobots)
	if s.metricsAccess.enabled() {
		e.GET("/metrics", s.handleMetrics) // its own bearer token, or open
	}
	e.GET("/static/*", s.handleStatic)
	e.GET("/sw.js", s.handleServiceWorker) // a static file at the root: its scope is the whole site
	e.GET("/login", s.handleLoginPage)
	e.POST("/login", s.handleLogin)
	e.POST("/logout", s.handleLogout)
	e.GET("/signup", s.handleSignupPage)
	e.POST("/signup", s.handleSignup)
	e.GET("/auth/oidc/login", s.handleOIDCLogin)
	e.GET("/auth/oidc/callback", s.handleOIDCCallback)
	e.GET("/channels/confirm", s.handleConfirmPage)
	e.POST("/channels/confirm", s.handleConfirmChannel)

	u := e.Group("", s.requireUser)
	u.GET("/", s.handleHome)
	u.POST("/conversations", s.handleCreateConversation)
	u.GET("/c/:id", s.handleConversation)
	u.GET("/c/:id/stream", s.handleStream)
	u.POST("/c/:id/messages", s.handleSendMessage)
	u.POST("/c/:id/retry", s.handleRetry)
	u.POST("/c/:id/stop", s.handleStop)
	u.POST("/c/:id/regenerate", s.handleRegenerate)
	u.GET("/c/:id/messages/:event/edit", s.handleEditForm)
	u.POST("/c/:id/messages/:event/edit", s.handleEditMessage)
	u.POST("/c/:id/versions/:n", s.handleChooseVersion)
	u.POST("/c/:id/queued/send", s.handleSendQueued)
	u.POST("/c/:id/queued/:queued/remove", s.handleRemoveQueued)
	u.GET("/c/:id/documents/:doc", s.handleDocument)
	u.GET("/c/:id/timeline", s.handleTimeline)
	u.GET("/c/:id/export.md", s.handleExportMarkdown)
	u.GET("/c/:id/export.json", s.handleExportJSON)
	u.GET("/questions/:id", s.handleQuestionPage)
	u.POST("/questions/:id/answer", s.handleAnswer)
	u.POST("/questions/:id/decline", s.handleDecline)
	u.POST("/questions/:id/cancel", s.handleCancel)
	u.POST("/c/:id/feedback/:item/:item_id", s.handleFeedback)
	u.GET("/inbox", s.handleInbox)
	u.GET("/live", s.handleLive)
	u.GET("/search", s.handleSearch)
	u.GET("/archived", s.handleArchived)
	u.GET("/settings", s.handleSettings)
	u.POST("/settings", s.handleSaveSettings)
	u.POST("/settings/password", s.handleChangePassword)
	u.POST("/settings/tokens", s.handleCreateToken)
	u.POST("/settings/tokens/revoke", s.handleRevokeToken)
	u.POST("/settings/channels", s.handleAddChannel)
	u.POST("/settings/channels/remove", s.handleRemoveChannel)
	u.POST("/settings/channels/confirm", s.handleConfirmAgain)
	u.POST("/settings/devices/remove", s.handleRemoveDevice)
	u.POST("/settings/notifications", s.handleSaveNotifyPrefs)
	u.POST("/c/:id/rename", s.handleRename)
	u.POST("/c/:id/archive", s.handleArchive)
	u.POST("/c/:id/delete", s.handleDelete)

	s.apiRoutes()

	staff := u.Group("", requireStaff)
	staff.GET("/review", s.handleReview)
	staff.GET("/review/figures", s.handleFigures)
	staff.GET("/review/groups", s.handleGroups)
	staff.GET("/review/queue", s.handleQueue)
	staff.GET("/review/export.jsonl", s.handleExportEval)
	staff.POST("/review/queue/:id/reviewed", s.handleMarkReviewed)
	staff.POST("/review/queue/:id/assign", s.handleAssign)
	staff.POST("/c/:id/notes", s.handleAddNote)
	staff.POST("/c/:id/labels", s.handleLabel)
	staff.GET("/review/labels", s.handleLabels)
	staff.POST("/review/labels", s.handleSaveLabels)
	staff.GET("/review/reasons", s.handleReasons)
	staff.POST("/review/reasons", s.handleSaveReasons)
	staff.POST("/review/groups", s.handleAddGroup)
	staff.POST("/review/groups/:name/add", s.handleAddToGroup)
	staff.POST("/review/groups/:name/remove", s.handleRemoveFromGroup)
	staff.POST("/review/groups/:name/delete", s.handleDeleteGroup)
	staff.POST("/review/groups/:name/channels", s.handleAddGroupChannel)
	staff.POST("/review/groups/:name/channels/remove", s.handleRemoveGroupChannel)
	staff.POST("/review/groups/:name/channels/confirm", s.handleConfirmGroupChannel)
	// The MCP server (web/inbound/mcpserver): its own bearer tokens, its own Origin check.
	s.echo.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", echo.WrapHandler(s.mcp))
}

// MountA2A serves the A2A server (web/inbound/a2aserver, a protocol adapter of its own,
// built and started by cmd/parley) at its paths: the agent cards and the JSON-RPC endpoints,
// with their own bearer tokens. Call it before Serve.
func (s *Server) MountA2A(h http.Handler) {
	a2a := echo.WrapHandler(h)
	s.echo.GET("/.well-known/agent-card.json", a2a)
	s.echo.GET("/a2a/:agent/.well-known/agent-card.json", a2a)
	s.echo.POST("/a2a/:agent", a2a)
}

// handleHealth answers 200 "ok" while the database answers and takes writes (a probe write
// at most every store.ProbeEvery), 503 with the reason otherwise.
func (s *Server) handleHealth(c echo.Context) error {
	ctx := c.Request().Context()
	if err := s.health.Ping(ctx); err != nil {
		return c.String(http.StatusServiceUnavailable, "database unavailable\n")
	}
	if err := s.health.Writable(ctx); err != nil {
		return c.String(http.StatusServiceUnavailable, "database not writable: "+domain.ErrorMessage(err)+"\n")
	}
	return c.String(http.StatusOK, "ok\n")
}

// handleStatic serves an embedded asset: its URL carries the assets' version, so it is
// cached for good.
func (s *Server) handleStatic(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return s.static.serve(c, strings.TrimPrefix(c.Request().URL.Path, "/static/"))
}

// Routes lists the routes as "METHOD path", so that a test can hold every one of them to
// its access rules.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		if r.Method == http.MethodGet || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodDelete {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// handleRobots asks crawlers to keep out: Parley's pages are people's conversations, behind a
// sign-in, and a crawler that followed /robots.txt to the sign-in page would read it wrong.
func handleRobots(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return c.String(http.StatusOK, "User-agent: *\nDisallow: /\n")
}
