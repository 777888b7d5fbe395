package web_test

import (
	"bytes"
	"io/fs"
	"os"
	"testing"

	"github.com/parley-chat/parley/static"
)

// The pages' stylesheets and scripts are served minified, under their own URLs.
func TestStatic_ServesMinified(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	client := rawClient(t)
	for path, name := range map[string]string{"/static/app.css": "app.css", "/static/app.js": "app.js", "/static/shell.js": "shell.js", "/sw.js": "sw.js"} {
		_, served := fetch(t, client, ts.URL+path, "")
		src, err := os.ReadFile("../static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := fs.ReadFile(static.FS, name)
		if !bytes.Equal(served, want) || len(served) >= len(src) {
			t.Errorf("%s: served %d bytes, its source %d, the minified file %d", path, len(served), len(src), len(want))
		}
	}
}
