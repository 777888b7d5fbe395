package web_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/views"
	"github.com/parley-chat/parley/web"
)

// growing is a model of what app.js makes of the "datastar" events of one streaming message:
// the body's HTML as the page shows it (text appended at the caret escaped, as the DOM shows
// it).
type growing struct {
	t       testing.TB
	frozen  strings.Builder
	open    string
	hasOpen bool
	ended   bool
	events  int
}

func (g *growing) apply(ev sseEvent) {
	g.t.Helper()
	g.events++
	a := map[string]string{}
	for _, line := range ev.Data {
		k, v, _ := strings.Cut(line, " ")
		if old, ok := a[k]; ok {
			v = old + "\n" + v
		}
		a[k] = v
	}
	if v, ok := a["s"]; ok {
		k, rest, _ := strings.Cut(v, " ")
		l, h, _ := strings.Cut(rest, " ")
		at, _ := strconv.Atoi(k)
		keep, _ := strconv.Atoi(l)
		u := utf16.Encode([]rune(g.open))
		g.open = string(utf16.Decode(u[:at])) + h + string(utf16.Decode(u[len(u)-keep:]))
	}
	if v, ok := a["a"]; ok {
		g.open = strings.Replace(g.open, views.Caret, html.EscapeString(v)+views.Caret, 1)
	}
	if _, ok := a["f"]; ok {
		g.frozen.WriteString(strings.Replace(g.open, views.Caret, "", 1))
		g.open, g.hasOpen = "", false
	}
	g.frozen.WriteString(a["b"])
	if v, ok := a["o"]; ok {
		g.open, g.hasOpen = v, true
	}
	if _, ok := a["e"]; ok {
		g.ended = true
	}
}

func (g *growing) html() string {
	return g.frozen.String() + strings.Replace(g.open, views.Caret, "", 1)
}

// gatedAgent writes the given pieces, each once the test allows it.
func gatedAgent(pieces []string, gate <-chan struct{}) *scripted {
	return &scripted{name: "gated", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		for _, p := range pieces {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := out.Text(p); err != nil {
				return err
			}
		}
		return nil
	}}
}

// until reads events, applying a streaming message's to g, until done says so.
func (r *sseReader) until(g *growing, done func(sseEvent) bool) []sseEvent {
	r.t.Helper()
	var evs []sseEvent
	for {
		ev := r.next()
		evs = append(evs, ev)
		if ev.Event == "datastar" && g != nil {
			g.apply(ev)
		}
		if done(ev) {
			return evs
		}
	}
}

func isMarkdown(ev sseEvent) bool { return ev.Event == "datastar" }

var reply = []string{"Here ", "is ", "**the ", "plan", "**", ":\n\n", "- one", "\n- two", "\n\n", "Done", "."}

func TestStream_GrowsFormattedMarkdownAndSendsNothingTwice(t *testing.T) {
	gate := make(chan struct{})
	ts := newTestServer(t, newDB(t), gatedAgent(reply, gate))
	path := ts.start(t, "gated", "plan")
	s := ts.open(t, path+"/stream?after=0", "")
	g := &growing{t: t}
	for i := range reply {
		gate <- struct{}{}
		evs := s.until(g, isMarkdown)
		if i == 0 && !strings.Contains(evs[len(evs)-2].data(), `class="msg agent streaming"`) {
			t.Errorf("the message did not begin with its element: %v", evs)
		}
		if i == 4 && !strings.Contains(g.html(), "<strong>the plan</strong>") {
			t.Errorf("after the closing ** the page shows %q, want bold", g.html())
		}
	}
	// The end: no text again, just the end, with the finished message's id.
	evs := s.until(g, func(ev sseEvent) bool { return ev.Event == "datastar" && g.ended })
	end := evs[len(evs)-1]
	if strings.Contains(end.data(), "Here is") || end.ID == "" || strings.Contains(end.ID, "/") {
		t.Errorf("the end event %+v resends text or names the message still", end)
	}
	want := views.Markdown(strings.Join(reply, ""))
	if got := g.html(); got != want {
		t.Errorf("the page grew into\n%q\nwant the finished message\n%q", got, want)
	}
	if g.events > len(reply)+2 {
		t.Errorf("%d events for %d pieces", g.events, len(reply))
	}
}

func TestStream_ReconnectMidMessage(t *testing.T) {
	gate := make(chan struct{})
	ts := newTestServer(t, newDB(t), gatedAgent(reply, gate))
	path := ts.start(t, "gated", "plan")
	first := ts.open(t, path+"/stream?after=0", "")
	g1 := &growing{t: t}
	for range 5 {
		gate <- struct{}{}
		first.until(g1, isMarkdown)
	}
	cut := first.last
	if !strings.Contains(cut, "/") {
		t.Fatalf("the id %q does not say the page grows a message", cut)
	}
	first.resp.Body.Close()
	// More is written while the page is away.
	for range 3 {
		gate <- struct{}{}
	}
	again := ts.open(t, path+"/stream", cut)
	g := &growing{t: t}
	evs := again.until(g, func(ev sseEvent) bool { return isMarkdown(ev) })
	var replaced bool
	for _, ev := range evs {
		d := ev.data()
		if strings.Contains(d, `class="msg agent streaming"`) {
			replaced = !strings.Contains(d, "selector") // morphed in place, not appended
		}
		if strings.Contains(d, "Here ") && ev.Event != "datastar" {
			t.Errorf("the text came twice: %q", d)
		}
	}
	if !replaced {
		t.Errorf("the message the page had was not put back in place: %v", evs)
	}
	for range len(reply) - 8 {
		gate <- struct{}{}
	}
	again.until(g, func(sseEvent) bool { return g.ended })
	if got, want := g.html(), views.Markdown(strings.Join(reply, "")); got != want {
		t.Errorf("after the reconnect the page shows\n%q\nwant\n%q", got, want)
	}
}

// A page that did not have the message yet (its id names no message) gets it appended whole.
func TestStream_ReconnectBeforeTheMessage(t *testing.T) {
	gate := make(chan struct{})
	ts := newTestServer(t, newDB(t), gatedAgent(reply, gate))
	path := ts.start(t, "gated", "plan")
	ts.waitState(t, convID(t, path), domain.StateRunning)
	evs, _ := ts.db.Events(context.Background(), convID(t, path), 0)
	for range 4 {
		gate <- struct{}{}
	}
	s := ts.open(t, path+"/stream", strconv.FormatInt(evs[len(evs)-1].ID, 10))
	g := &growing{t: t}
	got := s.until(g, isMarkdown)
	if d := got[len(got)-2].data(); !strings.Contains(d, "selector #thread") || !strings.Contains(d, "mode append") {
		t.Errorf("the message came as %q, want appended to the thread", d)
	}
	if !strings.HasPrefix(g.html(), "<p>Here is") {
		t.Errorf("the page got %q", g.html())
	}
}

// The end of a message is committed before the hub hears it. A page drawn in between shows
// the finished message, and its stream adds nothing of it: not the text the hub still holds
// as live, a second copy of the message that would stay unfinished.
func TestStream_APageDrawnBeforeTheHubHeardTheMessageEnd(t *testing.T) {
	db := newDB(t)
	finish := make(chan struct{})
	a := &scripted{name: "writer", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		for _, p := range reply {
			if err := out.Text(p); err != nil {
				return err
			}
		}
		if err := out.EndMessage(); err != nil {
			return err
		}
		<-finish
		return nil
	}}
	r := runnerFor(db, a)
	ts := newTestServerFrom(t, db, startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: r, Heartbeat: time.Hour}))
	// The hub hears the finished message when the test says so (as the runner's observer does).
	ended, hear := make(chan struct{}), make(chan struct{})
	db.Observe(func(evs []domain.Event) {
		for _, ev := range evs {
			if ev.Kind == domain.EventAgentMessage {
				close(ended)
				<-hear
			}
		}
		r.Hub().Publish(evs)
		r.Watch().Publish(evs)
	})
	path := ts.start(t, "writer", "plan")
	<-ended
	_, page := ts.get(t, path)
	after := regexp.MustCompile(`stream\?after=(\d+)`).FindStringSubmatch(page)
	if after == nil || !strings.Contains(page, "<strong>the plan</strong>") {
		t.Fatalf("the page lacks the finished message or its stream:\n%s", page)
	}
	s := ts.open(t, path+"/stream?after="+after[1], "")
	evs := []sseEvent{s.next()} // sent once the stream caught up, the hub not having heard the end
	close(hear)
	close(finish)
	id := convID(t, path)
	ts.waitState(t, id, domain.StateDone)
	log, _ := db.Events(context.Background(), id, 0)
	last := strconv.FormatInt(log[len(log)-1].ID, 10)
	upToLast := func(ev sseEvent) bool { e, _, _ := strings.Cut(ev.ID, "/"); return e == last }
	if !upToLast(evs[0]) {
		evs = append(evs, s.until(nil, upToLast)...)
	}
	for _, ev := range evs {
		if ev.Event == "datastar" || strings.Contains(ev.data(), "msg agent") {
			t.Errorf("the stream adds to the page the message it has: %s %q", ev.Event, ev.data())
		}
	}
}

// The page's scripts that apply the stream's events run before Datastar, which opens the
// stream: on a first visit to a busy server, app.js could otherwise arrive after the text of
// the message being written, which nothing then applies (the message ends empty).
func TestStream_ThePageCanApplyItBeforeDatastarOpensIt(t *testing.T) {
	ts := newTestServer(t, newDB(t), gatedAgent(nil, nil))
	_, page := ts.get(t, ts.start(t, "gated", "plan"))
	ds := strings.Index(page, "/static/datastar.js")
	for _, js := range []string{"/static/app.js", "/static/shell.js"} {
		if i := strings.Index(page, js); i < 0 || ds < 0 || i > ds {
			t.Errorf("%s comes at %d, datastar.js at %d: want it before", js, i, ds)
		}
	}
}

func TestStream_ReconnectAfterTheMessageEndedAndAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	db := storetest.Open(t, path)
	gate := make(chan struct{}, len(reply))
	for range reply {
		gate <- struct{}{}
	}
	ts := newTestServer(t, db, gatedAgent(reply, gate))
	conv := ts.start(t, "gated", "plan")
	id := convID(t, conv)
	ts.waitState(t, id, domain.StateDone)
	ids := func(evs []sseEvent) []string {
		var out []string
		for _, ev := range evs {
			if ev.ID != "" {
				out = append(out, ev.ID)
			}
		}
		return out
	}
	evs, _ := db.Events(context.Background(), id, 0)
	lastID := strconv.FormatInt(evs[len(evs)-1].ID, 10)
	done := func(ev sseEvent) bool { return ev.ID == lastID }
	all := ids(ts.open(t, conv+"/stream?after=0", "").until(nil, done))
	if len(all) < 4 {
		t.Fatalf("ids %v", all)
	}
	// From the log, the message ended: each event once, from the one after the id.
	rest := ids(ts.open(t, conv+"/stream", all[1]).until(nil, done))
	if strings.Join(rest, ",") != strings.Join(all[2:], ",") {
		t.Errorf("after %s got %v, want %v", all[1], rest, all[2:])
	}
	// After a restart, the same.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	ts.Close()
	db.Close()
	db = storetest.Open(t, path)
	ts = newTestServer(t, db, gatedAgent(reply, gate))
	rest = ids(ts.open(t, conv+"/stream", all[1]).until(nil, done))
	if strings.Join(rest, ",") != strings.Join(all[2:], ",") {
		t.Errorf("after a restart, after %s got %v, want %v", all[1], rest, all[2:])
	}
}

// A page that stops reading holds back nobody: the agent writes on, other pages get every
// piece, and when it reads again it gets what it missed in a few events, not one a piece.
func TestStream_ASlowReaderHurtsNoOne(t *testing.T) {
	const pieces = 20000
	long := &scripted{name: "long", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		for i := range pieces {
			if err := out.Text(fmt.Sprintf("word%d ", i)); err != nil {
				return err
			}
		}
		return nil
	}}
	db := newDB(t)
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db, long), Heartbeat: time.Hour})
	ts := newTestServerFrom(t, db, srv)
	c, err := db.CreateConversation(context.Background(), 0, "long", "long", "")
	if err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/c/%d", c.ID)
	// The slow page: a connection that reads nothing until told.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s/stream?after=0 HTTP/1.1\r\nHost: %s\r\n\r\n", path, strings.TrimPrefix(ts.URL, "http://"))
	// Another page reads as it comes.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := ts.open(t, path+"/stream?after=0", "")
		g := &growing{t: t}
		s.until(g, func(ev sseEvent) bool { return g.ended })
	}()
	if code, body, _ := ts.post(t, path+"/messages", map[string][]string{"text": {"write a lot"}}); code != 200 {
		t.Fatalf("send = %d %s", code, body)
	}
	ts.waitState(t, c.ID, domain.StateDone) // the agent finished with the slow page unread
	wg.Wait()
	// Now the slow page reads: everything, in far fewer events than pieces.
	r := bufio.NewReaderSize(conn, 1<<16)
	var n, texts int
	deadline := time.Now().Add(20 * time.Second)
	conn.SetReadDeadline(deadline)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the slow page stopped reading after %d events: %v", n, err)
		}
		if line == "event:datastar\n" {
			n++
		}
		if strings.HasPrefix(line, "data:a ") || strings.HasPrefix(line, "data:o ") || strings.HasPrefix(line, "data:s ") || strings.HasPrefix(line, "data:b ") {
			texts++
		}
		if strings.Contains(line, "state-done") {
			break
		}
	}
	if n > pieces/10 {
		t.Errorf("the slow page got %d events for %d pieces, want them coalesced", n, pieces)
	}
	if texts == 0 {
		t.Error("the slow page got no text")
	}
	io.Copy(io.Discard, io.LimitReader(r, 0))
}

// A tool call's card is appended where the call appears, then replaced as it changes; the
// page drawn afterwards shows the call once, as it ended, and the exports have it (and no
// checkpoint).
func TestStream_ToolCallAppendedThenReplaced(t *testing.T) {
	gate := make(chan struct{})
	tool := &scripted{name: "tooler", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		tc := domain.ToolCall{Key: "7-1", ID: "call_1", Server: "docs", Tool: "search", Arguments: []byte(`{"q":"<b>x</b>"}`), Status: domain.ToolRunning, Started: time.Now()}
		if err := out.Checkpoint(map[string]string{"turn": "1"}); err != nil {
			return err
		}
		if err := out.Tool(tc); err != nil {
			return err
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		tc.Update, tc.Status, tc.Took = true, domain.ToolDone, 1200*time.Millisecond
		tc.Content = []domain.ToolContent{{Type: "text", Text: "three pages"}}
		return out.Tool(tc)
	}}
	ts := newTestServer(t, newDB(t), tool)
	path := ts.start(t, "tooler", "search")
	s := ts.open(t, path+"/stream?after=0", "")
	isCard := func(ev sseEvent) bool {
		return ev.Event == "datastar-patch-elements" && strings.Contains(ev.data(), `class="card tool-call`)
	}
	evs := s.until(nil, isCard)
	first := evs[len(evs)-1].data()
	if !strings.Contains(first, "selector #thread") || !strings.Contains(first, "mode append") || !strings.Contains(first, `id="tool-7-1"`) {
		t.Errorf("the call came as %q, want its card appended to the thread", first)
	}
	if !strings.Contains(first, "running") || !strings.Contains(first, "&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("the running card lacks its status or its escaped arguments: %q", first)
	}
	gate <- struct{}{}
	evs = s.until(nil, isCard)
	last := evs[len(evs)-1]
	if d := last.data(); !strings.Contains(d, "selector #tool-7-1") || !strings.Contains(d, "mode replace") ||
		!strings.Contains(d, "done") || !strings.Contains(d, "1.2 s") || !strings.Contains(d, "three pages") {
		t.Errorf("the end came as %q, want the card replaced by the done one", d)
	}
	if last.ID == "" {
		t.Error("the card's patch carries no event id")
	}
	ts.waitState(t, convID(t, path), domain.StateDone)
	_, page := ts.get(t, path)
	if n := strings.Count(page, `id="tool-7-1"`); n != 1 || !strings.Contains(page, "three pages") {
		t.Errorf("the page shows the call %d times, or not as it ended", n)
	}
	_, tl := ts.get(t, path+"/timeline")
	if !strings.Contains(tl, "entry entry-tool") || !strings.Contains(tl, "done in 1.2 s") {
		t.Errorf("the timeline page lacks the call:\n%s", tl)
	}
	_, md := ts.get(t, path+"/export.md")
	for _, want := range []string{"called tool search of server docs", "tool search of server docs: done in 1.2 s", "> three pages"} {
		if !strings.Contains(md, want) {
			t.Errorf("export.md lacks %q:\n%s", want, md)
		}
	}
	_, js := ts.get(t, path+"/export.json")
	if n := strings.Count(js, `"kind": "tool_call"`); n != 2 || strings.Contains(js, `"kind": "checkpoint"`) {
		t.Errorf("export.json has %d tool_call events, or a checkpoint:\n%s", n, js)
	}
}
