// Package static holds the browser assets embedded in the binary.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
)

//go:generate go run ../cmd/datastar-bundle

// FS holds the stylesheets, the icon, app.js, shell.js and the Datastar client (placed by go
// generate).
//
//go:embed *.css *.svg app.js shell.js datastar.js datastar.js.map
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
