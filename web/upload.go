package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
)

// Upload limits, unless the operator sets others (NewServerOptions.Uploads).
const (
	DefaultMaxUploadBytes = 10_000_000
	DefaultMaxFiles       = 10
)

// UploadLimits bound the files a person attaches to one message.
type UploadLimits struct {
	// MaxBytes is the size of one file; MaxFiles the number of files of one message.
	MaxBytes int64
	MaxFiles int
}

// bodyLimit is the largest request a route with uploads accepts: the files and the message.
func (l UploadLimits) bodyLimit() int64 {
	return int64(l.MaxFiles)*l.MaxBytes + domain.MaxMessageBytes + 1<<20
}

// unreadable says why a form with files could not be read.
func (l UploadLimits) unreadable(err error) string {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Sprintf("The form and its files are too large: at most %d files of %s each.", l.MaxFiles, domain.ByteSize(l.MaxBytes))
	}
	return "The form could not be read; try again."
}

// textTypes are the mime types of text files, by extension; other text is text/plain.
var textTypes = map[string]string{
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".json": "application/json",
	".ndjson": "application/x-ndjson", ".jsonl": "application/x-ndjson", ".yaml": "application/yaml",
	".yml": "application/yaml", ".toml": "application/toml", ".xml": "application/xml",
	".md": "text/markdown", ".markdown": "text/markdown", ".log": "text/x-log", ".html": "text/html",
	".htm": "text/html", ".css": "text/css", ".js": "text/javascript", ".ts": "text/typescript",
	".go": "text/x-go", ".py": "text/x-python", ".java": "text/x-java", ".rs": "text/x-rust",
	".c": "text/x-c", ".h": "text/x-c", ".cpp": "text/x-c++", ".sh": "text/x-shellscript",
	".sql": "application/sql", ".diff": "text/x-diff", ".patch": "text/x-diff",
}

// binaryTypes are the binary files people may attach, as http.DetectContentType names them.
var binaryTypes = map[string]bool{
	"application/pdf": true, "image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
}

// acceptAttachments is the file picker's accept list.
const acceptAttachments = "text/*,.log,.csv,.tsv,.json,.ndjson,.jsonl,.yaml,.yml,.toml,.xml,.md,.go,.py,.java,.rs,.c,.h,.cpp,.sh,.sql,.diff,.patch,.ts,.js,application/pdf,image/png,image/jpeg,image/gif,image/webp"

// readFiles reads the files attached to a form (field "files"), checking each one's size
// and type. Files that cannot be taken give one EINVALID error naming every one of them and
// why, so that one send shows them all (the page keeps the person's files: they remove the
// refused ones and send again).
func (l UploadLimits) readFiles(c echo.Context) ([]domain.File, error) {
	form, err := c.MultipartForm()
	if errors.Is(err, http.ErrNotMultipart) {
		return nil, nil
	}
	if err != nil {
		return nil, domain.Errorf(domain.EINVALID, "%s", l.unreadable(err))
	}
	var files []domain.File
	headers := form.File["files"]
	if len(headers) > l.MaxFiles {
		return nil, domain.Errorf(domain.EINVALID, "Attach at most %d files to one message (you chose %d).", l.MaxFiles, len(headers))
	}
	var refused []string
	for _, h := range headers {
		f, err := l.readFile(h)
		switch {
		case domain.ErrorCode(err) == domain.EINVALID:
			refused = append(refused, domain.ErrorMessage(err))
		case err != nil:
			return nil, err
		default:
			files = append(files, f)
		}
	}
	if len(refused) > 0 {
		return nil, domain.Errorf(domain.EINVALID, "%s", strings.Join(refused, " "))
	}
	return files, nil
}

func (l UploadLimits) readFile(h *multipart.FileHeader) (domain.File, error) {
	if h.Size > l.MaxBytes {
		return domain.File{}, domain.Errorf(domain.EINVALID, "%s is %s; a file can be at most %s.", domain.FileName(h.Filename), domain.ByteSize(h.Size), domain.ByteSize(l.MaxBytes))
	}
	r, err := h.Open()
	if err != nil {
		return domain.File{}, fmt.Errorf("open upload: %w", err)
	}
	defer r.Close()
	content, err := io.ReadAll(io.LimitReader(r, l.MaxBytes+1))
	if err != nil {
		return domain.File{}, fmt.Errorf("read upload: %w", err)
	}
	return l.Check(h.Filename, content)
}

// Check takes a file's content, or says why it cannot: too large, empty, not an accepted
// type. The A2A server checks the files its clients send with it.
func (l UploadLimits) Check(name string, content []byte) (domain.File, error) {
	name = domain.FileName(name)
	switch {
	case int64(len(content)) > l.MaxBytes:
		return domain.File{}, domain.Errorf(domain.EINVALID, "%s is %s; a file can be at most %s.", name, domain.ByteSize(int64(len(content))), domain.ByteSize(l.MaxBytes))
	case len(content) == 0:
		return domain.File{}, domain.Errorf(domain.EINVALID, "%s is empty.", name)
	}
	mt, err := fileType(name, content)
	if err != nil {
		return domain.File{}, err
	}
	return domain.File{Name: name, MimeType: mt, Content: content}, nil
}

// fileType names a file's type from its content, its extension choosing among text types.
// Text must be UTF-8; binary files are accepted when they are PDF or a common image.
func fileType(name string, content []byte) (string, error) {
	if utf8.Valid(content) && !hasControlBytes(content) {
		if mt, ok := textTypes[strings.ToLower(path.Ext(name))]; ok {
			return mt, nil
		}
		return "text/plain", nil
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(content))
	if binaryTypes[sniffed] {
		return sniffed, nil
	}
	kind := "binary data"
	switch {
	case strings.HasPrefix(sniffed, "text/"):
		kind = "text in an encoding other than UTF-8; save it as UTF-8"
	case sniffed != "application/octet-stream" && sniffed != "":
		kind = sniffed
	}
	return "", domain.Errorf(domain.EINVALID, "%s cannot be attached: it is %s. Attach text (UTF-8), PDF, or PNG, JPEG, GIF or WebP images.", name, kind)
}

// hasControlBytes reports control bytes no text file has (NUL and the like; tabs, newlines,
// form feeds, and the bells, backspaces and escapes of terminal captures are text).
func hasControlBytes(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\a' && c != '\b' && c != 0x1b {
			return true
		}
	}
	return false
}

// answerFiles reads the files given for q's file fields, one a field, by field name. Every
// file is checked: refused says why each refused one cannot be taken, by field, and files
// holds the others. err is for a form that cannot be read at all.
func (l UploadLimits) answerFiles(c echo.Context, q domain.Question) (files map[string]domain.File, refused domain.FieldErrors, err error) {
	form, err := c.MultipartForm()
	if errors.Is(err, http.ErrNotMultipart) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, domain.Errorf(domain.EINVALID, "The form could not be read (files can be at most %s).", domain.ByteSize(l.MaxBytes))
	}
	files = map[string]domain.File{}
	for _, fld := range q.Fields {
		hs := form.File[fld.Name]
		if fld.Kind != domain.KindFile || len(hs) == 0 || hs[0].Size == 0 && hs[0].Filename == "" {
			continue // the browser sends an empty part for a file input left empty
		}
		f, err := l.readFile(hs[0])
		switch {
		case domain.ErrorCode(err) == domain.EINVALID:
			if refused == nil {
				refused = domain.FieldErrors{}
			}
			refused[fld.Name] = domain.ErrorMessage(err)
		case err != nil:
			return nil, nil, err
		default:
			files[fld.Name] = f
		}
	}
	return files, refused, nil
}
