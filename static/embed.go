// Package static holds the browser assets embedded in the binary.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"strings"
	"sync"
)

//go:generate go run ../cmd/datastar-bundle
//go:generate go run ../cmd/static-minify app.css thread.css code.css app.js shell.js push.js sw.js

// files are the embedded assets: the icons, the web app manifest, the Datastar client, and
// in min/ the stylesheets and scripts minified (both placed by go generate).
//
//go:embed *.svg manifest.webmanifest icon-*.png badge-96.png apple-touch-icon.png
//go:embed datastar.js datastar.js.map min
var files embed.FS

// FS holds the assets under the names the pages use: app.css, thread.css, code.css, app.js,
// shell.js, push.js and the service worker sw.js are served minified (the readable files
// beside this one are what people edit), the rest as they are.
var FS fs.FS = assets{}

// assets is files with the minified stylesheets and scripts under their own names.
type assets struct{}

// minified is the name of name's minified file, if name could be an asset's.
func minified(name string) string {
	if name == "min" || strings.Contains(name, "/") {
		return ""
	}
	return "min/" + name
}

func (assets) Open(name string) (fs.File, error) {
	if m := minified(name); m != "" {
		if f, err := files.Open(m); err == nil {
			return f, nil
		}
	}
	if name == "min" || strings.HasPrefix(name, "min/") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return files.Open(name)
}

// Version is a short hash of the embedded assets, used to bust browser caches on upgrade:
// it changes with any served byte.
func Version() string { return version() }

var version = sync.OnceValue(func() string {
	h := sha256.New()
	fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
})
