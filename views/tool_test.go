package views

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/parley-chat/parley/domain"
)

func renderTool(t *testing.T, tc domain.ToolCall) *html.Node { return parse(t, ToolCard(tc)) }

func toolEvent(id int64, tc domain.ToolCall) domain.Event {
	return domain.Event{ID: id, Kind: domain.EventToolCall, Author: "Helper", At: time.Unix(id, 0), ToolCall: &tc}
}

// A call keeps the place where it first appeared, showing its latest state, once.
func TestBuildThread_ToolCallKeepsItsPlace(t *testing.T) {
	a := domain.ToolCall{Key: "3-1", Server: "docs", Tool: "search", Status: domain.ToolRunning}
	b := domain.ToolCall{Key: "3-2", Server: "docs", Tool: "fetch", Status: domain.ToolWaiting, Waiting: "the person’s approval"}
	aDone, bFailed := a, b
	aDone.Status, aDone.Update, aDone.Took = domain.ToolDone, true, 1200*time.Millisecond
	bFailed.Status, bFailed.Update, bFailed.Error = domain.ToolFailed, true, "no such page"
	aProgress := a
	aProgress.Update, aProgress.Progress = true, &domain.ToolProgress{Done: 1, Total: 2}
	events := []domain.Event{
		{ID: 1, Kind: domain.EventUserMessage, Text: "find it"},
		toolEvent(2, a),
		{ID: 3, Kind: domain.EventAgentMessage, MessageID: "x", Text: "Looking."},
		toolEvent(4, b),
		toolEvent(5, aProgress),
		toolEvent(6, aDone),
		toolEvent(7, bFailed),
	}
	th := BuildThread(events)
	var kinds []ItemKind
	for _, it := range th.Items {
		kinds = append(kinds, it.Kind)
	}
	if want := []ItemKind{ItemUser, ItemTool, ItemAgent, ItemTool}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	if got := th.Items[1].Tool; got.Key != "3-1" || got.Status != domain.ToolDone || got.Took != 1200*time.Millisecond {
		t.Errorf("first call = %+v, want done in 1.2 s", got)
	}
	if got := th.Items[3].Tool; got.Key != "3-2" || got.Status != domain.ToolFailed || got.Error != "no such page" {
		t.Errorf("second call = %+v, want failed", got)
	}
	if th.Items[1].At != time.Unix(2, 0) {
		t.Errorf("the call's time is %v, want when it appeared", th.Items[1].At)
	}
}

func TestToolCard_Ended(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot really"))
	tc := domain.ToolCall{
		Key: "9-1", Server: "files", Tool: "read", Status: domain.ToolDone, Took: 1234 * time.Millisecond,
		Arguments: json.RawMessage(`{"path":"<b>a.txt</b>","n":2}`),
		Notes:     []string{"Parley declined the server's request for a password."},
		Content: []domain.ToolContent{
			{Type: "text", Text: "line <i>one</i>\nline two"},
			{Type: "image", MIME: "image/png", Data: png},
			{Type: "image", MIME: "image/svg+xml", Data: base64.StdEncoding.EncodeToString([]byte("<svg onload=alert(1)>"))},
			{Type: "image", MIME: "image/png", Data: "not base64!"},
			{Type: "resource_link", URI: "javascript:alert(1)", Name: "click me"},
			{Type: "resource_link", URI: "https://example.com/doc?a=1", Name: "The doc"},
			{Type: "unsupported", Text: "[audio, audio/wav, 3 KB: not shown]"},
		},
	}
	doc := renderTool(t, tc)
	cards := findAll(doc, func(n *html.Node) bool { return n.Data == "details" && hasClass(n, "tool-call") })
	if len(cards) != 1 {
		t.Fatalf("%d tool cards", len(cards))
	}
	card := cards[0]
	if id, _ := attr(card, "id"); id != "tool-9-1" {
		t.Errorf("id = %q", id)
	}
	if _, open := attr(card, "open"); open {
		t.Error("an ended call's card is open")
	}
	summary := text(findAll(card, func(n *html.Node) bool { return n.Data == "summary" })[0])
	for _, want := range []string{"files", "read", "done", "1.2 s"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary %q lacks %q", summary, want)
		}
	}
	codes := findAll(card, func(n *html.Node) bool { return n.Data == "code" })
	if len(codes) != 1 || !strings.Contains(text(codes[0]), "\"path\": \"<b>a.txt</b>\",\n  \"n\": 2") {
		t.Errorf("arguments not shown pretty, as text: %v", codes)
	}
	if len(findAll(card, func(n *html.Node) bool {
		return n.Data == "b" || n.Data == "i" || n.Data == "svg" && !hasClass(n, "icon")
	})) != 0 { // Parley's own icons aside
		t.Error("the tool's text became markup")
	}
	pres := findAll(card, func(n *html.Node) bool { return n.Data == "pre" && hasClass(n, "tool-text") })
	if len(pres) != 1 || text(pres[0]) != "line <i>one</i>\nline two" {
		t.Errorf("text result: %v", pres)
	}
	imgs := findAll(card, func(n *html.Node) bool { return n.Data == "img" })
	if len(imgs) != 1 {
		t.Fatalf("%d images, want the png only", len(imgs))
	}
	if src, _ := attr(imgs[0], "src"); src != "data:image/png;base64,"+png {
		t.Errorf("img src = %q", src)
	}
	links := findAll(card, func(n *html.Node) bool { return n.Data == "a" })
	if len(links) != 1 {
		t.Fatalf("%d links, want the https one only", len(links))
	}
	if href, _ := attr(links[0], "href"); href != "https://example.com/doc?a=1" {
		t.Errorf("href = %q", href)
	}
	if rel, _ := attr(links[0], "rel"); rel != "noopener noreferrer nofollow" {
		t.Errorf("rel = %q", rel)
	}
	page := text(card)
	for _, want := range []string{"javascript:alert(1)", "image/svg+xml", "[audio, audio/wav, 3 KB: not shown]", "Parley declined the server's request"} {
		if !strings.Contains(page, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	for _, n := range findAll(card, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "data-") || strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("<%s> carries %s=%q", n.Data, a.Key, a.Val)
			}
		}
	}
}

func TestToolCard_RunningAndWaiting(t *testing.T) {
	running := domain.ToolCall{Key: "1-1", Server: "s", Tool: "t", Status: domain.ToolRunning, Progress: &domain.ToolProgress{Done: 3, Total: 10, Message: "page 3 of 10"}}
	doc := renderTool(t, running)
	card := findAll(doc, func(n *html.Node) bool { return n.Data == "details" })[0]
	if _, open := attr(card, "open"); !open {
		t.Error("a running call's card is closed")
	}
	p := findAll(card, func(n *html.Node) bool { return n.Data == "progress" })
	if len(p) != 1 {
		t.Fatalf("%d progress bars", len(p))
	}
	if v, _ := attr(p[0], "value"); v != "3" {
		t.Errorf("progress value = %q", v)
	}
	if m, _ := attr(p[0], "max"); m != "10" {
		t.Errorf("progress max = %q", m)
	}
	if page := text(card); !strings.Contains(page, "page 3 of 10") || !strings.Contains(page, "running") {
		t.Errorf("running card: %q", page)
	}
	waiting := domain.ToolCall{Key: "1-2", Server: "s", Tool: "t", Status: domain.ToolWaiting, Waiting: "the person’s approval"}
	doc = renderTool(t, waiting)
	card = findAll(doc, func(n *html.Node) bool { return n.Data == "details" })[0]
	if _, open := attr(card, "open"); !open {
		t.Error("a waiting call's card is closed")
	}
	if page := text(card); !strings.Contains(page, "waiting for the person’s approval") {
		t.Errorf("waiting card: %q", page)
	}
}

func TestToolCardID(t *testing.T) {
	for key, want := range map[string]string{"12-3": "tool-12-3", `1"><script>`: "tool-1script", "a b.c#d": "tool-abcd"} {
		if got := ToolCardID(key); got != want {
			t.Errorf("ToolCardID(%q) = %q, want %q", key, got, want)
		}
	}
}

// Arguments as the log stores them (Go's encoder escapes <, > and &) read as written.
func TestPrettyJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"q":"\u003cb\u003e \u0026"}`: "{\n  \"q\": \"<b> &\"\n}",
		`{"q":"\\u003c"}`:              "{\n  \"q\": \"\\\\u003c\"\n}",
		`{"q":"\u00e9\n"}`:             "{\n  \"q\": \"\\u00e9\\n\"\n}",
		`not json`:                     "not json",
	} {
		if got := prettyJSON(json.RawMessage(in)); got != want {
			t.Errorf("prettyJSON(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestTook(t *testing.T) {
	for d, want := range map[time.Duration]string{340 * time.Millisecond: "340 ms", 1200 * time.Millisecond: "1.2 s", 125 * time.Second: "2 min 5 s"} {
		if got := Took(d); got != want {
			t.Errorf("Took(%v) = %q, want %q", d, got, want)
		}
	}
}

// The timeline shows a call, its waits and its end; runs and progress in between are left out.
func TestBuildTimeline_ToolCalls(t *testing.T) {
	tc := domain.ToolCall{Key: "5-1", Server: "docs", Tool: "search", Arguments: json.RawMessage(`{"q":"x"}`), Status: domain.ToolWaiting, Waiting: "the person’s approval"}
	running := tc
	running.Update, running.Status, running.Waiting = true, domain.ToolRunning, ""
	progress := running
	progress.Progress = &domain.ToolProgress{Done: 1}
	done := running
	done.Status, done.Took, done.Result = domain.ToolDone, 1200*time.Millisecond, "3 pages found"
	entries := BuildTimeline([]domain.Event{toolEvent(1, tc), toolEvent(2, running), toolEvent(3, progress), toolEvent(4, done)}, nil)
	var got []string
	for _, e := range entries {
		if e.Kind != EntryTool {
			t.Errorf("entry %+v is not a tool entry", e)
		}
		got = append(got, e.Summary+" | "+e.Text)
	}
	want := []string{
		"called tool search of server docs | {\n  \"q\": \"x\"\n}",
		"tool search waits for the person’s approval | ",
		"tool search of server docs: done in 1.2 s | 3 pages found",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	md := TimelineMarkdown(TimelineData{Entries: entries})
	for _, w := range []string{"Helper called tool search of server docs", "> {", "done in 1.2 s", "> 3 pages found"} {
		if !strings.Contains(md, w) {
			t.Errorf("the Markdown export lacks %q:\n%s", w, md)
		}
	}
}

func TestQuestionCard_LinkAndLabels(t *testing.T) {
	q := domain.Question{ID: 4, Message: "Sign in", Link: "https://auth.example.com/login?state=abc&x=1",
		SubmitLabel: "I have signed in", DeclineLabel: "Reject"}
	doc := render(t, QuestionView{Record: domain.QuestionRecord{Question: q}})
	page := text(doc)
	for _, want := range []string{"https://auth.example.com/login?state=abc&x=1", "I have signed in", "Reject…", "Open the page"} {
		if !strings.Contains(page, want) {
			t.Errorf("card lacks %q: %s", want, page)
		}
	}
	if strings.Contains(page, "Submit") || strings.Contains(page, "Decline") {
		t.Errorf("default labels shown over the question's own: %s", page)
	}
	links := findAll(doc, func(n *html.Node) bool { return n.Data == "a" && hasClass(n, "button") })
	if len(links) != 1 {
		t.Fatalf("%d link buttons", len(links))
	}
	for k, want := range map[string]string{"href": q.Link, "target": "_blank", "rel": "noopener noreferrer"} {
		if got, _ := attr(links[0], k); got != want {
			t.Errorf("link %s = %q, want %q", k, got, want)
		}
	}
	// A link that is not a web page's is not a link, whatever let it through.
	q.Link = "javascript:alert(1)"
	doc = render(t, QuestionView{Record: domain.QuestionRecord{Question: q}})
	if n := len(findAll(doc, func(n *html.Node) bool { return n.Data == "a" })); n != 0 {
		t.Errorf("%d links for a javascript: address", n)
	}
}

func TestQuestionCard_Formats(t *testing.T) {
	q := domain.Question{ID: 5, Message: "Details", Fields: []domain.Field{
		{Name: "site", Kind: domain.KindText, Format: domain.FormatURI},
		{Name: "mail", Kind: domain.KindText, Format: domain.FormatEmail},
		{Name: "when", Kind: domain.KindText, Format: domain.FormatDateTime, Default: "2026-11-24T09:30:00Z"},
		{Name: "conf", Kind: domain.KindTextarea, Format: domain.FormatJSON},
		{Name: "plain", Kind: domain.KindTextarea},
	}}
	doc := render(t, QuestionView{Record: domain.QuestionRecord{Question: q}})
	checks := []struct{ name, key, want string }{
		{"site", "type", "url"},
		{"mail", "type", "email"},
		{"when", "type", "datetime-local"},
		{"when", "value", "2026-11-24T09:30"},
		{"conf", "class", "mono"},
		{"conf", "spellcheck", "false"},
		{"plain", "class", ""},
	}
	for _, c := range checks {
		if got, _ := attr(byName(doc, c.name)[0], c.key); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.name, c.key, got, c.want)
		}
	}
}
