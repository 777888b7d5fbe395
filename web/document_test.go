package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// file is one file of a multipart post.
type file struct {
	name    string
	content []byte
}

// postFiles posts a form with files, as the browser's composer does: in the field "files",
// or in the field a "field:" prefix of the file's name gives.
func (ts *testServer) postFiles(t testing.TB, path string, fields map[string]string, files ...file) (int, string, http.Header) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		field, name, ok := strings.Cut(f.name, ":")
		if !ok {
			field, name = "files", f.name
		}
		w, _ := mw.CreateFormFile(field, name)
		w.Write(f.content)
	}
	mw.Close()
	resp, err := noRedirect.Post(ts.URL+path, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// readerAgent replies with the first line of each document attached to the person's last message.
func readerAgent() *scripted { return &scripted{name: "reader", step: webtest.ReaderStep} }

func TestAttachedFiles_AreStoredShownAndReadByTheAgent(t *testing.T) {
	a := readerAgent()
	ts := newTestServer(t, newDB(t), a)
	csv := []byte("city,people\nLisbon,30\nPorto,12\n")
	code, body, h := ts.postFiles(t, "/conversations", map[string]string{"agent": "reader", "text": "Summarise these"},
		file{"guests.csv", csv}, file{`..\evil/"name".log`, []byte("line one\nline two\n")})
	if code != http.StatusSeeOther {
		t.Fatalf("POST /conversations = %d %.300s", code, body)
	}
	path := h.Get("Location")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateDone)

	_, page := ts.get(t, path)
	for _, want := range []string{"Summarise these", "guests.csv", "name.log", `href="/c/1/documents/1"`, `href="/c/1/documents/1?download=1"`,
		`guests.csv starts with &#34;city,people&#34;`, "name.log starts with &#34;line one&#34;", "AVAILABLE_DOCUMENTS:", fmt.Sprintf("id 1: guests.csv (text/csv, %d B)", len(csv))} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	resp, err := http.Get(ts.URL + path + "/documents/1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, csv) || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") ||
		resp.Header.Get("Content-Disposition") != `inline; filename=guests.csv` {
		t.Fatalf("document = %q %v", got, resp.Header)
	}
	resp, _ = http.Get(ts.URL + path + "/documents/1?download=1")
	resp.Body.Close()
	if resp.Header.Get("Content-Disposition") != `attachment; filename=guests.csv` {
		t.Fatalf("download disposition = %q", resp.Header.Get("Content-Disposition"))
	}

	// Another conversation's ids find nothing.
	other := convID(t, ts.start(t, "reader", "hello"))
	if code, _ := ts.get(t, fmt.Sprintf("/c/%d/documents/1", other)); code != http.StatusNotFound {
		t.Fatalf("document of another conversation = %d, want 404", code)
	}
	if code, _ := ts.get(t, path+"/documents/999"); code != http.StatusNotFound {
		t.Fatalf("missing document = %d, want 404", code)
	}
}

func TestAttachedFiles_Refused(t *testing.T) {
	db := newDB(t)
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db, readerAgent()), Uploads: web.UploadLimits{MaxBytes: 1000, MaxFiles: 2}})
	ts := newTestServerFrom(t, db, srv)
	path := ts.start(t, "reader", "hello")
	ts.waitState(t, convID(t, path), domain.StateDone)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...)
	tests := []struct {
		name  string
		files []file
		want  string
	}{
		{"binary", []file{{"core.bin", []byte("\x7fELF\x00\x01\x02")}}, "core.bin cannot be attached: it is binary data"},
		{"invalid UTF-8", []file{{"notes.txt", []byte("caf\xe9 au lait")}}, "notes.txt cannot be attached"},
		{"too large", []file{{"big.log", bytes.Repeat([]byte("x"), 1001)}}, "big.log is 1001 B; a file can be at most 1000 B"},
		{"empty", []file{{"empty.txt", nil}}, "empty.txt is empty"},
		{"too many", []file{{"a.txt", []byte("a")}, {"b.txt", []byte("b")}, {"c.txt", []byte("c")}}, "at most 2 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := ts.postFiles(t, path+"/messages", map[string]string{"text": "look at this"}, tt.files...)
			if code != 200 || !strings.Contains(body, tt.want) || !strings.Contains(body, "composer-error") {
				t.Fatalf("= %d %.400s, want the error %q", code, body, tt.want)
			}
			if strings.Contains(body, `id="message"`) {
				t.Fatal("the message box was replaced: what was typed would be lost")
			}
		})
	}
	// An image is taken as itself.
	if code, body, _ := ts.postFiles(t, path+"/messages", map[string]string{"text": "a picture"}, file{"shot.png", png}); code != 200 || strings.Contains(body, "cannot") {
		t.Fatalf("png = %d %.300s", code, body)
	}
	ts.waitState(t, convID(t, path), domain.StateDone)
	d, err := db.Document(context.Background(), convID(t, path), 1)
	if err != nil || d.MimeType != "image/png" || d.Label != domain.LabelUpload || d.Size != int64(len(png)) {
		t.Fatalf("stored = %+v %v", d.DocumentRef, err)
	}
}

func TestFileField_AnswerIsAnUploadedDocument(t *testing.T) {
	a := &scripted{name: "files", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if r := lastResolution(in); r != nil {
			d, ok := domain.AnswerDocument(r.Values["config"])
			if !ok {
				return out.Text(fmt.Sprintf("No document in %v.", r.Values))
			}
			doc, err := in.Documents.Document(ctx, d.ID)
			if err != nil {
				return err
			}
			return out.Text(fmt.Sprintf("Got %s (%s): %s", doc.Name, doc.MimeType, doc.Content))
		}
		_, err := out.Ask(domain.Question{Message: "Upload the config file.", Fields: []domain.Field{
			{Name: "config", Label: "Config file", Kind: domain.KindFile, Required: true},
			{Name: "note", Kind: domain.KindText},
		}})
		return err
	}}
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "files", "deploy")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	_, page := ts.get(t, path)
	if !strings.Contains(page, `enctype="multipart/form-data"`) || !strings.Contains(page, `type="file"`) {
		t.Fatal("the question's form has no file input sent as multipart")
	}

	// Without the file: the field says so, nothing is stored.
	code, body, _ := ts.postFiles(t, "/questions/1/answer", map[string]string{"note": "kept"})
	if code != 422 || !strings.Contains(body, "Config file is required.") || !strings.Contains(body, `value="kept"`) {
		t.Fatalf("missing file = %d %.500s", code, body)
	}
	// A binary file is refused next to its field.
	code, body, _ = ts.postFiles(t, "/questions/1/answer", map[string]string{"note": "kept"}, file{"config:x.bin", []byte{0, 1, 2}})
	if code != 422 || !strings.Contains(body, "x.bin cannot be attached") {
		t.Fatalf("binary file = %d %.500s", code, body)
	}
	// With the file the answer is stored as a document and the agent reads it.
	if code, body, _ := ts.postFiles(t, "/questions/1/answer", map[string]string{"note": "v2"}, file{"config:app.yaml", []byte("replicas: 3\n")}); code != 200 {
		t.Fatalf("answer = %d %.300s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	_, page = ts.get(t, path)
	for _, want := range []string{"Got app.yaml (application/yaml): replicas: 3", `href="/c/1/documents/1"`, "app.yaml"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestDocument_ServedAsTextNeverAsMarkup(t *testing.T) {
	ts := newTestServer(t, newDB(t), readerAgent())
	code, body, h := ts.postFiles(t, "/conversations", map[string]string{"agent": "reader", "text": "Look"},
		file{"page.html", []byte("<script>alert(1)</script>\n")},
		file{"pic.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`)},
		file{"query.sql", []byte("SELECT 1;\n")})
	if code != http.StatusSeeOther {
		t.Fatalf("POST /conversations = %d %.300s", code, body)
	}
	path := h.Get("Location")
	ts.waitState(t, convID(t, path), domain.StateDone)
	for i, name := range []string{"page.html", "pic.svg", "query.sql"} {
		resp, err := http.Get(fmt.Sprintf("%s%s/documents/%d", ts.URL, path, i+1))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
			t.Errorf("%s served as %q, want plain text", name, got)
		}
		if got := resp.Header.Get("Content-Disposition"); got != "inline; filename="+name {
			t.Errorf("%s disposition %q, want inline", name, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("%s headers %v, want nosniff and a sandbox", name, resp.Header)
		}
	}
}

func TestFileField_AnswerAboveTheFormLimit(t *testing.T) {
	a := &scripted{name: "files", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if r := lastResolution(in); r != nil {
			d, _ := domain.AnswerDocument(r.Values["dump"])
			return out.Text(fmt.Sprintf("Got %s of %d bytes.", d.Name, d.Size))
		}
		_, err := out.Ask(domain.Question{Message: "Upload the dump.", Fields: []domain.Field{{Name: "dump", Kind: domain.KindFile, Required: true}}})
		return err
	}}
	ts := newTestServer(t, newDB(t), a)
	path := ts.start(t, "files", "debug")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	// Larger than a plain form may be, within the upload limit.
	big := bytes.Repeat([]byte("2025-03-01 INFO tick\n"), (web.MaxBodyBytes/21)+1000)
	if code, body, _ := ts.postFiles(t, "/questions/1/answer", nil, file{"dump:big.log", big}); code != 200 || strings.Contains(body, "could not be read") {
		t.Fatalf("answer = %d %.300s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	if _, page := ts.get(t, path); !strings.Contains(page, fmt.Sprintf("Got big.log of %d bytes.", len(big))) {
		t.Error("the agent did not get the file")
	}
}
