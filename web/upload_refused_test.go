package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

// filesAgent asks q and then says what it was given: each field's value and each file's name
// and content.
func filesAgent(q domain.Question) *scripted {
	return &scripted{name: "files", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		r := lastResolution(in)
		if r == nil {
			_, err := out.Ask(q)
			return err
		}
		var parts []string
		for _, f := range q.Fields {
			v, ok := r.Values[f.Name]
			if !ok {
				continue
			}
			if d, isDoc := domain.AnswerDocument(v); isDoc {
				doc, err := in.Documents.Document(ctx, d.ID)
				if err != nil {
					return err
				}
				v = fmt.Sprintf("%s=%s", doc.Name, doc.Content)
			}
			parts = append(parts, fmt.Sprintf("%s: %v", f.Name, v))
		}
		return out.Text("Given " + strings.Join(parts, "; ") + ".")
	}}
}

// A refused file is reported with every other field's error in the same response, what was
// typed is kept, nothing is stored, and the card keeps its file inputs (the same ids, so that
// the page's morph keeps the files the person chose). The next submit is taken.
func TestFileField_RefusedFileShowsEveryError(t *testing.T) {
	q := domain.Question{Message: "Send the config and the log.", Fields: []domain.Field{
		{Name: "config", Label: "Config", Kind: domain.KindFile, Required: true},
		{Name: "log", Label: "Log", Kind: domain.KindFile, Required: true},
		{Name: "count", Label: "Replicas", Kind: domain.KindInteger, Required: true, Min: floatp(1)},
		{Name: "title", Label: "Title", Kind: domain.KindText, Required: true},
		{Name: "note", Label: "Note", Kind: domain.KindTextarea},
	}}
	ts := newTestServer(t, newDB(t), filesAgent(q))
	path := ts.start(t, "files", "deploy")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	_, page := ts.get(t, path)

	code, body, _ := ts.postFiles(t, "/questions/1/answer", map[string]string{"count": "0", "note": "typed note"},
		file{"config:x.bin", []byte{0, 1, 2}}, file{"log:app.log", []byte("started\n")})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("answer = %d %.300s", code, body)
	}
	for _, want := range []string{"x.bin cannot be attached", "Must be at least 1.", "Title is required.", `value="0"`, "typed note"} {
		if !strings.Contains(body, want) {
			t.Errorf("response lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Log is required") || strings.Contains(body, "Config is required") {
		t.Errorf("a file given is reported missing:\n%s", body)
	}
	for _, input := range []string{`id="q1-config" name="config"`, `id="q1-log" name="log"`} {
		if !strings.Contains(page, input) || !strings.Contains(body, input) {
			t.Errorf("file input %q is not the same on the page and in the response", input)
		}
	}
	if rec, _ := ts.db.Question(context.Background(), 1); !rec.Pending() {
		t.Fatal("an answer with a refused file was stored")
	}

	code, body, _ = ts.postFiles(t, "/questions/1/answer", map[string]string{"count": "2", "title": "v2", "note": "typed note"},
		file{"config:app.yaml", []byte("replicas: 2\n")}, file{"log:app.log", []byte("started\n")})
	if code != http.StatusOK || !strings.Contains(body, "Answered") {
		t.Fatalf("answer = %d %.500s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	_, page = ts.get(t, path)
	if want := "config: app.yaml=replicas: 2\n; log: app.log=started\n; count: 2; title: v2; note: typed note."; !strings.Contains(page, "Given ") ||
		!strings.Contains(strings.ReplaceAll(page, "\n", " "), strings.ReplaceAll(want, "\n", " ")) {
		t.Errorf("the agent was not given both files and the fields:\n%s", page)
	}
}

// An optional file that is refused stops the answer too, even when every other field is
// valid: the person is told, not answered for without it.
func TestFileField_RefusedOptionalFileStoresNothing(t *testing.T) {
	q := domain.Question{Message: "Anything to add?", Fields: []domain.Field{
		{Name: "title", Kind: domain.KindText, Required: true},
		{Name: "extra", Label: "Extra file", Kind: domain.KindFile},
		{Name: "more", Label: "More", Kind: domain.KindFile},
	}}
	ts := newTestServer(t, newDB(t), filesAgent(q))
	path := ts.start(t, "files", "go")
	ts.waitState(t, convID(t, path), domain.StateWaiting)
	code, body, _ := ts.postFiles(t, "/questions/1/answer", map[string]string{"title": "T"},
		file{"extra:empty.txt", nil}, file{"more:core.bin", []byte("\x7fELF\x00\x01")})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "empty.txt is empty.") || !strings.Contains(body, "core.bin cannot be attached") {
		t.Fatalf("answer = %d %.500s; want both files refused", code, body)
	}
	if rec, _ := ts.db.Question(context.Background(), 1); !rec.Pending() {
		t.Fatal("the answer was stored without its refused file")
	}
}

// The message box and the start form name every refused file in one response, not the
// first only; nothing is sent, and the start form keeps what was typed.
func TestAttachedFiles_EveryRefusalNamedAtOnce(t *testing.T) {
	ts := newTestServer(t, newDB(t), readerAgent())
	files := []file{{"good.txt", []byte("fine\n")}, {"core.bin", []byte("\x7fELF\x00\x01\x02")}, {"empty.txt", nil}}
	want := []string{"core.bin cannot be attached: it is binary data", "empty.txt is empty."}

	code, body, _ := ts.postFiles(t, "/conversations", map[string]string{"agent": "reader", "text": "my first words"}, files...)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "my first words") {
		t.Fatalf("POST /conversations = %d %.300s, want the start form again with the text", code, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("start form lacks %q", w)
		}
	}

	path := ts.start(t, "reader", "hello")
	ts.waitState(t, convID(t, path), domain.StateDone)
	code, body, _ = ts.postFiles(t, path+"/messages", map[string]string{"text": "look at these"}, files...)
	if code != http.StatusOK || !strings.Contains(body, "composer-error") {
		t.Fatalf("send = %d %.300s", code, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("composer error lacks %q: %.500s", w, body)
		}
	}
	if _, err := ts.db.Document(context.Background(), convID(t, path), 1); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("a file of a refused message was stored: %v", err)
	}
}

// A date field that must not be in the past refuses yesterday next to the field, keeping what
// was typed, and takes today; the browser's input carries the same limit as min.
func TestQuestion_DateInThePastRefused(t *testing.T) {
	q := domain.Question{Message: "When?", Fields: []domain.Field{
		{Name: "day", Label: "Day", Kind: domain.KindDate, Required: true, MinDate: domain.Today},
		{Name: "note", Label: "Note", Kind: domain.KindText},
	}}
	ts := newTestServer(t, newDB(t), filesAgent(q))
	path := ts.start(t, "files", "plan")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	now := time.Now()
	today, yesterday := now.Format(time.DateOnly), now.AddDate(0, 0, -1).Format(time.DateOnly)
	if _, page := ts.get(t, path); !strings.Contains(page, `min="`+today+`"`) {
		t.Errorf("the date input has no min of today (%s)", today)
	}

	code, body, _ := ts.post(t, "/questions/1/answer", url.Values{"day": {yesterday}, "note": {"typed"}})
	wantErr := "Must be today (" + now.Format("2 January 2006") + ") or later."
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, wantErr) || !strings.Contains(body, `value="`+yesterday+`"`) || !strings.Contains(body, `value="typed"`) {
		t.Fatalf("yesterday = %d %.600s; want %q with the typed values", code, body, wantErr)
	}
	if rec, _ := ts.db.Question(context.Background(), 1); !rec.Pending() {
		t.Fatal("a date in the past was stored")
	}

	code, body, _ = ts.post(t, "/questions/1/answer", url.Values{"day": {today}, "note": {"typed"}})
	if code != http.StatusOK || !strings.Contains(body, "Answered") {
		t.Fatalf("today = %d %.300s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	if _, page := ts.get(t, path); !strings.Contains(page, "day: "+today) {
		t.Error("the agent was not given today's date")
	}
}
