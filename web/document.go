package web

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// handleDocument serves a document of a conversation: PDF and images as themselves, text as
// plain text (never as HTML, whatever it holds), anything else as a download, everything
// sandboxed; ?download=1 saves it.
func (s *Server) handleDocument(c echo.Context) error {
	convID, err := paramID(c)
	if err != nil {
		return err
	}
	docID, err := strconv.ParseInt(c.Param("doc"), 10, 64)
	if err != nil {
		return domain.Errorf(domain.ENOTFOUND, "Document not found.")
	}
	if _, err := s.readable(c, convID); err != nil {
		return err
	}
	d, err := s.ledger.Document(c.Request().Context(), convID, docID)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	ctype, disposition := "text/plain; charset=utf-8", "inline"
	switch {
	case binaryTypes[d.MimeType]:
		ctype = d.MimeType
	case !d.Readable():
		ctype, disposition = "application/octet-stream", "attachment"
	}
	if c.QueryParam("download") != "" {
		disposition = "attachment"
	}
	h.Set(echo.HeaderContentType, ctype)
	h.Set(echo.HeaderContentDisposition, mime.FormatMediaType(disposition, map[string]string{"filename": d.Name}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
	h.Set(echo.HeaderCacheControl, "private, max-age=3600")
	etag := `"` + d.SHA256 + `"`
	h.Set("ETag", etag)
	if strings.Contains(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	h.Set(echo.HeaderContentLength, fmt.Sprint(len(d.Content)))
	return c.Blob(http.StatusOK, ctype, d.Content)
}

// attach is what the file pickers need to know.
func (s *Server) attach() views.Attach {
	return views.Attach{Accept: acceptAttachments, MaxBytes: s.uploads.MaxBytes, MaxFiles: s.uploads.MaxFiles}
}
