package static

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"

	"github.com/parley-chat/parley/internal/assetmin"
)

// sources are the stylesheets and scripts people edit, beside this file; the Datastar
// client comes minified.
func sources(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"*.css", "*.js"} {
		names, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if n != "datastar.js" {
				out = append(out, n)
			}
		}
	}
	if len(out) < 6 {
		t.Fatalf("sources = %v, want the stylesheets and scripts", out)
	}
	return out
}

// Every stylesheet and script is served minified, as its source is now: a source edited
// since go generate would be served stale.
func TestFS_ServesEachSourceMinified(t *testing.T) {
	for _, name := range sources(t) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		served, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatalf("%s is not served (add it to go:generate in embed.go): %v", name, err)
		}
		want, err := assetmin.Minify(name, src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(served, want) {
			t.Errorf("the embedded %s is not %s minified: run `npm run generate` (go generate ./static)", name, name)
		}
		if len(served) >= len(src) {
			t.Errorf("%s: served %d bytes, its source %d", name, len(served), len(src))
		}
		if filepath.Ext(name) == ".js" {
			if _, err := js.Parse(parse.NewInputBytes(served), js.Options{}); err != nil {
				t.Errorf("the minified %s does not parse: %v", name, err)
			}
		}
	}
}

// The assets are served under their own names; min/ is not a path of its own.
func TestFS_Names(t *testing.T) {
	for _, name := range []string{"app.css", "app.js", "sw.js", "datastar.js", "favicon.svg", "manifest.webmanifest", "icon-192.png"} {
		f, err := FS.Open(name)
		if err != nil {
			t.Errorf("Open(%s): %v", name, err)
			continue
		}
		st, err := f.Stat()
		if err != nil || st.Name() != name || st.IsDir() {
			t.Errorf("Stat(%s) = %v, %v", name, st, err)
		}
		f.Close()
	}
	for _, name := range []string{"min", "min/app.css", "embed.go", "nothing.js"} {
		if _, err := fs.ReadFile(FS, name); err == nil {
			t.Errorf("%s is served", name)
		}
	}
	if v := Version(); len(v) != 12 || v != Version() {
		t.Errorf("Version() = %q", v)
	}
}
