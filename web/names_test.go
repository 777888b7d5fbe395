package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// hasDirectionControl reports the invisible characters that make "invoice\u202Efdp.exe"
// show as "invoiceexe.pdf".
func hasDirectionControl(s string) bool { return strings.ContainsFunc(s, domain.IsBidiControl) }

// A file whose name has control characters (a browser sends it as it is on disk) no longer
// makes the whole form unreadable: Decline declines, Submit answers, and the file's name
// reads as what it is; its content arrives byte for byte.
func TestFileField_ControlCharactersInTheFileName(t *testing.T) {
	q := domain.Question{Message: "Send the invoice.", Fields: []domain.Field{
		{Name: "invoice", Label: "Invoice", Kind: domain.KindFile, Required: true},
		{Name: "note", Label: "Note", Kind: domain.KindText},
	}}
	ts := newTestServer(t, newDB(t), filesAgent(q))
	ctx := context.Background()

	first := ts.start(t, "files", "pay this")
	ts.waitState(t, convID(t, first), domain.StateWaiting)
	code, body, _ := ts.postFiles(t, "/questions/1/decline", map[string]string{"_reason": "not mine"}, file{"invoice:bad\x01name.pdf", []byte("x\n")})
	if rec, _ := ts.db.Question(ctx, 1); code != http.StatusOK || rec.Resolution == nil || rec.Resolution.Outcome != domain.Declined || rec.Resolution.Reason != "not mine" {
		t.Fatalf("decline = %d %.400s; question %+v", code, body, rec.Resolution)
	}

	second := ts.start(t, "files", "pay that")
	id := convID(t, second)
	ts.waitState(t, id, domain.StateWaiting)
	// The content looks like part headers and holds an escape: none of it is touched.
	content := []byte("Content-Disposition: form-data; name=\"x\x1b[0m\"\r\n\r\ntotal 12\n")
	code, body, _ = ts.postFiles(t, "/questions/2/answer", map[string]string{"note": "paid"}, file{"invoice:in\x01voice\u202Efdp.exe", content})
	if code != http.StatusOK || !strings.Contains(body, "Answered") {
		t.Fatalf("answer = %d %.400s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	d, err := ts.db.Document(ctx, id, 1)
	if err != nil || d.Name != "invoicefdp.exe" || !bytes.Equal(d.Content, content) {
		t.Fatalf("stored document %q %q, %v; want invoicefdp.exe with the content as sent", d.Name, d.Content, err)
	}
	_, page := ts.get(t, second)
	if !strings.Contains(page, "invoicefdp.exe") || hasDirectionControl(page) {
		t.Errorf("the page does not show the file as invoicefdp.exe, or keeps a direction control:\n%s", page)
	}
}

// Files attached to a message keep names that read as what they are: no direction
// overrides, no control characters; the agent is given the same names.
func TestAttachedFiles_NamesReadAsTheyAre(t *testing.T) {
	ts := newTestServer(t, newDB(t), readerAgent())
	code, body, h := ts.postFiles(t, "/conversations", map[string]string{"agent": "reader", "text": "pay these"},
		file{"invoice\u202Efdp.exe", []byte("total 12\n")}, file{"notes\x02\u2067.txt", []byte("call Ann\n")})
	if code != http.StatusSeeOther {
		t.Fatalf("POST /conversations = %d %.300s", code, body)
	}
	path := h.Get("Location")
	ts.waitState(t, convID(t, path), domain.StateDone)
	_, page := ts.get(t, path)
	for _, want := range []string{"invoicefdp.exe", "notes.txt", "invoicefdp.exe starts with &#34;total 12&#34;", "id 1: invoicefdp.exe"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if hasDirectionControl(page) {
		t.Errorf("the page keeps a direction control:\n%s", page)
	}
}
