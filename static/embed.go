// Package static holds the browser assets embedded in the binary.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
)

//go:generate go run ../cmd/datastar-bundle

// FS holds the stylesheets, the icons, app.js, shell.js, push.js, the service worker and
// the web app manifest, and the Datastar client (placed by go generate).
//
//go:embed *.css *.svg app.js shell.js push.js sw.js manifest.webmanifest icon-*.png badge-96.png apple-touch-icon.png
//go:embed datastar.js datastar.js.map
var FS embed.FS

// Version is a short hash of the embedded assets, used to bust browser caches on upgrade.
func Version() string {
	h := sha256.New()
	entries, _ := FS.ReadDir(".")
	for _, e := range entries {
		b, _ := FS.ReadFile(e.Name())
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
