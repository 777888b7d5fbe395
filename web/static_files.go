package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/labstack/echo/v4"
)

// staticFiles serves the embedded assets. They change only with the binary, so each is
// compressed once, when first asked for, with brotli and gzip at their best, and kept.
type staticFiles struct {
	fsys  fs.FS
	mu    sync.Mutex
	files map[string]*staticFile
}

// staticFile is one asset and its encodings: gz and br are nil when not worth it.
type staticFile struct {
	once   sync.Once
	err    error
	ctype  string
	plain  []byte
	gz, br []byte
	etag   string // of plain: "hash"; the encodings' add -gz, -br
}

func newStaticFiles(fsys fs.FS) *staticFiles {
	return &staticFiles{fsys: fsys, files: map[string]*staticFile{}}
}

// file reads and compresses the asset on its first use. Only names of files are kept: a
// name not yet known is looked up first.
func (sf *staticFiles) file(name string) (*staticFile, error) {
	sf.mu.Lock()
	f := sf.files[name]
	sf.mu.Unlock()
	if f == nil {
		if _, err := fs.Stat(sf.fsys, name); err != nil {
			return nil, err
		}
		sf.mu.Lock()
		if f = sf.files[name]; f == nil {
			f = &staticFile{}
			sf.files[name] = f
		}
		sf.mu.Unlock()
	}
	f.once.Do(func() { f.err = f.load(sf.fsys, name) })
	return f, f.err
}

func (f *staticFile) load(fsys fs.FS, name string) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	f.plain, f.etag = b, hex.EncodeToString(sum[:8])
	f.ctype = mime.TypeByExtension(path.Ext(name))
	if path.Ext(name) == ".webmanifest" { // a type Go does not know
		f.ctype = "application/manifest+json"
	}
	if f.ctype == "" {
		f.ctype = http.DetectContentType(b)
	}
	if !compressible(f.ctype) || len(b) < compressMinBytes {
		return nil
	}
	var gz, br bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	bw.Write(b)
	bw.Close()
	if gz.Len() < len(b) {
		f.gz = gz.Bytes()
	}
	if br.Len() < len(b) {
		f.br = br.Bytes()
	}
	return nil
}

// serve answers with the asset, brotli or gzip encoded when the client takes it. Each
// encoding has its own ETag; a Range is served on the unencoded file only.
func (sf *staticFiles) serve(c echo.Context, name string) error {
	f, err := sf.file(name)
	if err != nil {
		return echo.ErrNotFound
	}
	w, r := c.Response(), c.Request()
	h := w.Header()
	h.Set(echo.HeaderContentType, f.ctype)
	body, etag := f.plain, f.etag
	if f.gz != nil || f.br != nil {
		varyAcceptEncoding(h)
	}
	switch {
	case f.br != nil && accepts(r, "br"):
		body, etag = f.br, etag+"-br"
		h.Set("Content-Encoding", "br")
	case f.gz != nil && accepts(r, "gzip"):
		body, etag = f.gz, etag+"-gz"
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", `"`+etag+`"`)
	if h.Get("Content-Encoding") != "" {
		r = r.Clone(r.Context())
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	return nil
}
