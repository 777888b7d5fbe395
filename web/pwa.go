package web

import (
	"github.com/labstack/echo/v4"
)

// Parley installs as a web app: a manifest, and a service worker that shows the Web Push
// notifications of questions. Both are served without sign-in, as the browser fetches them
// on its own.

// handleServiceWorker serves the service worker at /sw.js: a worker's scope is the folder of
// its URL, and Parley's worker must see every page. Browsers check it for a new version
// against the server, never a year-long cache.
func (s *Server) handleServiceWorker(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-cache")
	return s.static.serve(c, "sw.js")
}
