package a2a_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/backend/a2a"
	"github.com/parley-chat/parley/domain"
)

// logDoc and pngDoc are a text document split off by intake and a file the person attached.
var (
	logDoc = domain.Document{
		DocumentRef: domain.DocumentRef{Name: "app.log", Title: "Application log", MimeType: "text/x-log"},
		Content:     []byte("2025-03-01T10:00:00Z INFO started\n2025-03-01T10:00:02Z ERROR db: connection refused (größe 3)\n"),
	}
	pngDoc = domain.Document{
		DocumentRef: domain.DocumentRef{Name: "screenshot.png", MimeType: "image/png", Label: domain.LabelUpload},
		Content:     []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 0xff},
	}
)

// textAndFiles splits a message the remote got into its text and its file parts.
func textAndFiles(t *testing.T, msg *sdk.Message) (string, []sdk.FileBytes) {
	t.Helper()
	text := ""
	var files []sdk.FileBytes
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case sdk.TextPart:
			text += p.Text
		case sdk.FilePart:
			f, ok := p.File.(sdk.FileBytes)
			if !ok {
				t.Fatalf("got file part %+v, want bytes", p.File)
			}
			files = append(files, f)
		default:
			t.Errorf("got an unexpected part %T", p)
		}
	}
	return text, files
}

// wantFile checks that a file part carries doc, byte for byte.
func wantFile(t *testing.T, got sdk.FileBytes, doc domain.Document) {
	t.Helper()
	if got.Name != doc.Name || got.MimeType != doc.MimeType {
		t.Errorf("got file %q (%s), want %q (%s)", got.Name, got.MimeType, doc.Name, doc.MimeType)
	}
	b, err := base64.StdEncoding.DecodeString(got.Bytes)
	if err != nil {
		t.Fatalf("file %q: %v", got.Name, err)
	}
	if !bytes.Equal(b, doc.Content) {
		t.Errorf("file %q: got %q, want %q", got.Name, b, doc.Content)
	}
}

func TestAgent_Documents(t *testing.T) {
	t.Run("SentAsFiles", func(t *testing.T) {
		r := newRemote(t, turn{final(sdk.TextPart{Text: "The database refused the connection."}), completed()})
		c := newConvo(t, r.agent())
		c.Language = "de"
		raw := "Warum startet der Dienst nicht?\n\n" + string(logDoc.Content)
		rec, refs, err := c.SendWithDocuments(raw, "Warum startet der Dienst nicht?", logDoc, pngDoc)
		if err != nil {
			t.Fatal(err)
		}
		if m := rec.Messages(); len(m) != 1 || m[0] != "The database refused the connection." {
			t.Errorf("got messages %q", m)
		}
		got := r.received()
		if len(got) != 1 {
			t.Fatalf("the remote got %d messages, want 1", len(got))
		}
		text, files := textAndFiles(t, got[0].msg)
		want := "Warum startet der Dienst nicht?\n\n(The person writes in German.)\n\n" +
			domain.AvailableDocuments(refs) +
			"\nThe documents not marked [not attached] come with this message as file parts, in this order."
		if text != want {
			t.Errorf("got text\n%s\nwant\n%s", text, want)
		}
		if len(files) != 2 {
			t.Fatalf("got %d files, want 2", len(files))
		}
		wantFile(t, files[0], logDoc)
		wantFile(t, files[1], pngDoc)
		if lang := got[0].msg.Metadata["language"]; lang != "de" {
			t.Errorf("got metadata %v, want language de", got[0].msg.Metadata)
		}
	})

	t.Run("OverTheCap", func(t *testing.T) {
		r := newRemote(t, turn{final(sdk.TextPart{Text: "Read two of them."}), completed()})
		c := newConvo(t, r.agent(func(c *a2a.Config) { c.MaxDocumentBytes = 1000 }))
		doc := func(name string, n int) domain.Document {
			return domain.Document{DocumentRef: domain.DocumentRef{Name: name, MimeType: "text/plain"}, Content: bytes.Repeat([]byte(name[:1]), n)}
		}
		a, b, small := doc("a.txt", 600), doc("b.txt", 600), doc("c.txt", 300)
		if _, _, err := c.SendWithDocuments("Compare these", "", a, b, small); err != nil {
			t.Fatal(err)
		}
		text, files := textAndFiles(t, r.received()[0].msg)
		if len(files) != 2 {
			t.Fatalf("got %d files, want 2 (a.txt and c.txt)", len(files))
		}
		wantFile(t, files[0], a)
		wantFile(t, files[1], small)
		for _, want := range []string{"Compare these\n\nAVAILABLE_DOCUMENTS:", "- id 1: a.txt (text/plain, 600 B)\n",
			"- id 2: b.txt (text/plain, 600 B) [not attached: over the 1000 bytes Parley sends with one message]\n",
			"- id 3: c.txt (text/plain, 300 B)\n"} {
			if !strings.Contains(text, want) {
				t.Errorf("text %q lacks %q", text, want)
			}
		}
		if r.received()[0].msg.Metadata != nil {
			t.Errorf("got metadata %v, want none without a language", r.received()[0].msg.Metadata)
		}
	})

	t.Run("AgainOnRetry", func(t *testing.T) {
		r := newRemote(t,
			turn{status(sdk.TaskStateFailed, sdk.TextPart{Text: "disk full"})},
			turn{final(sdk.TextPart{Text: "Done."}), completed()},
		)
		c := newConvo(t, r.agent())
		if _, _, err := c.SendWithDocuments("check this log please\n"+string(logDoc.Content), "Check this log.", logDoc); err == nil {
			t.Fatal("got no error from a failed task")
		}
		if _, err := c.Retry(); err != nil {
			t.Fatal(err)
		}
		got := r.received()
		if len(got) != 2 || !got[1].newTask {
			t.Fatalf("got %d messages, want the retry as a new task", len(got))
		}
		text, files := textAndFiles(t, got[1].msg)
		if !strings.HasPrefix(text, "Check this log.\n\nAVAILABLE_DOCUMENTS:") || len(files) != 1 {
			t.Fatalf("got text %q and %d files, want the intent and the log again", text, len(files))
		}
		wantFile(t, files[0], logDoc)
	})

	t.Run("TaskEchoesTheDocuments", func(t *testing.T) {
		// Many servers answer with the Task first, the person's message (files included) in
		// its history: far above the event limit, which is about artifacts.
		big := domain.Document{DocumentRef: domain.DocumentRef{Name: "big.log", MimeType: "text/x-log"},
			Content: bytes.Repeat([]byte("2025-03-01T10:00:00Z INFO tick\n"), 100_000)}
		history := `[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"file","file":{"name":"big.log","bytes":"` +
			base64.StdEncoding.EncodeToString(big.Content) + `"}}]}]`
		task := `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"},"history":` + history + `}`
		r := newRemote(t)
		r.setOverride(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// Read the whole request (megabytes) first: a server that answers before it has
			// read the body may close the connection under the client still sending it.
			io.Copy(io.Discard, req.Body)
			sse(w, result(task), rawArtifactResult("final_result", `{"kind":"text","text":"A quiet log."}`), result(rawDone))
		}))
		rec, _, err := newConvo(t, r.agent()).SendWithDocuments("read it", "", big)
		if err != nil {
			t.Fatal(err)
		}
		if m := rec.Messages(); len(m) != 1 || m[0] != "A quiet log." {
			t.Errorf("got messages %q", m)
		}
	})

	t.Run("WithoutDocuments", func(t *testing.T) {
		// The intent is what the agent is told; the raw text stays with Parley.
		r := newRemote(t, turn{final(sdk.TextPart{Text: "Ok."}), completed()})
		c := newConvo(t, r.agent())
		c.Language = "fr"
		if _, _, err := c.SendWithDocuments("euh, bonjour, redémarre le cluster stp", "Redémarrer le cluster."); err != nil {
			t.Fatal(err)
		}
		got := r.received()[0].msg
		if len(got.Parts) != 1 || got.Parts[0].(sdk.TextPart).Text != "Redémarrer le cluster.\n\n(The person writes in French.)" {
			t.Errorf("got parts %+v", got.Parts)
		}
		if got.Metadata["language"] != "fr" {
			t.Errorf("got metadata %v", got.Metadata)
		}
	})
}

func TestAgent_FileAnswerIsSentAsAFilePart(t *testing.T) {
	ask := sdk.DataPart{Data: map[string]any{
		"require_user_input": true,
		"content":            "Upload the failing config.",
		"metadata": map[string]any{"input_fields": []any{
			map[string]any{"name": "config", "type": "file", "required": true},
			map[string]any{"name": "note", "type": "text"},
		}},
	}}
	r := newRemote(t,
		turn{status(sdk.TaskStateInputRequired, ask)},
		turn{final(sdk.TextPart{Text: "replicas is 0."}), completed()},
	)
	c := newConvo(t, r.agent())
	q := onlyQuestion(t, c.MustSend("Why is nothing running?"))
	if q.Fields[0].Kind != domain.KindFile {
		t.Fatalf("got field %+v, want a file field", q.Fields[0])
	}
	cfg := domain.Document{DocumentRef: domain.DocumentRef{Name: "app.yaml", MimeType: "application/yaml", Label: domain.LabelAnswer},
		Content: []byte("replicas: 0\n")}
	ref := c.AddDocument(cfg)
	c.Resolve(domain.Resolution{QuestionID: q.ID, Outcome: domain.Answered, Values: map[string]any{"config": ref, "note": "prod"}, By: "person"})
	c.MustResume()

	answer := r.received()[1].msg
	text, files := textAndFiles(t, withoutData(answer))
	for _, want := range []string{"- config: the file app.yaml (application/yaml, 12 B), attached as a file part", "- note: prod"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer text %q lacks %q", text, want)
		}
	}
	if len(files) != 1 {
		t.Fatalf("got %d file parts, want the answer's file", len(files))
	}
	wantFile(t, files[0], cfg)
}

// withoutData is a message without its DataParts.
func withoutData(m *sdk.Message) *sdk.Message {
	out := *m
	out.Parts = nil
	for _, p := range m.Parts {
		if _, ok := p.(sdk.DataPart); !ok {
			out.Parts = append(out.Parts, p)
		}
	}
	return &out
}
