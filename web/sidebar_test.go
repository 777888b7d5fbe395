package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// sidebarOf is the sidebar's list in a page or a patch.
func sidebarOf(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `id="sidebar-list"`)
	if i < 0 {
		t.Fatalf("no sidebar in %.300s", page)
	}
	j := strings.Index(page[i:], "</ul>")
	return page[i : i+j]
}

func TestSidebar_FollowsTheConversationsLive(t *testing.T) {
	ts := newTestServer(t, newDB(t), askerAgent(askerQuestion))
	_, home := ts.get(t, "/")
	if !strings.Contains(sidebarOf(t, home), "No conversations yet.") || !strings.Contains(home, `data-waiting="0"`) {
		t.Fatalf("an empty sidebar and count: %s", sidebarOf(t, home))
	}
	// The home page's live stream hears of the conversation started elsewhere and of its question.
	live := ts.open(t, "/live?c=0", "")
	path := ts.start(t, "asker", "Plan the offsite")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	for {
		ev := live.next()
		d := ev.data()
		if ev.Event == "datastar-patch-elements" && strings.Contains(d, "Plan the offsite") && strings.Contains(d, "waiting for you") && strings.Contains(d, `data-waiting="1"`) {
			if !strings.Contains(d, `data-latest-href="`+path+`"`) {
				t.Errorf("the count does not name the conversation that asks: %s", d)
			}
			break
		}
	}
	// Its own page marks it as the current one, and counts its question.
	_, page := ts.get(t, path)
	if side := sidebarOf(t, page); !strings.Contains(side, `aria-current="page"`) {
		t.Errorf("the sidebar does not mark the open conversation: %s", side)
	}
	if strings.Contains(page, `id="live"`) {
		t.Error("a conversation page opens a second stream: its own carries the sidebar")
	}
}

func TestManage_RenameArchiveSearchDelete(t *testing.T) {
	ts := newTestServer(t, newDB(t), askerAgent(askerQuestion))
	path := ts.start(t, "asker", "Plan the offsite")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	other := ts.start(t, "asker", "Order the catering")
	ts.waitState(t, convID(t, other), domain.StateWaiting)

	// Rename: the title shows everywhere; a blank one is refused.
	if code, _, h := ts.post(t, path+"/rename", url.Values{"title": {"  Offsite in   Lisbon "}}); code != http.StatusSeeOther || h.Get("Location") != path {
		t.Fatalf("rename = %d %v", code, h)
	}
	_, page := ts.get(t, path)
	if !strings.Contains(page, "<h1>Offsite in Lisbon</h1>") || !strings.Contains(sidebarOf(t, page), "Offsite in Lisbon") {
		t.Error("the new title is not shown")
	}
	if code, body, _ := ts.post(t, path+"/rename", url.Values{"title": {"   "}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "cannot be empty") {
		t.Errorf("blank rename = %d %s", code, body)
	}
	// Search: by title, and by a word of the question's conversation only the person has.
	_, found := ts.get(t, "/search?q=lisbon")
	if !strings.Contains(found, "1 conversation found") || !strings.Contains(found, `href="`+path+`"`) {
		t.Errorf("search by title: %.2000s", found)
	}
	_, found = ts.get(t, "/search?q=catering")
	if !strings.Contains(found, `href="`+other+`"`) {
		t.Error("search by a word of a message finds nothing")
	}
	// Archive: out of the sidebar, listed under Archived, still found; undone from there.
	if code, _, _ := ts.post(t, path+"/archive", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("archive = %d", code)
	}
	_, home := ts.get(t, "/")
	if strings.Contains(sidebarOf(t, home), "Offsite in Lisbon") {
		t.Error("an archived conversation stays in the sidebar")
	}
	_, arch := ts.get(t, "/archived")
	if !strings.Contains(arch, "Offsite in Lisbon") {
		t.Error("the archived list lacks it")
	}
	_, page = ts.get(t, path)
	if !strings.Contains(page, "This conversation is archived") {
		t.Error("its page does not say it is archived")
	}
	if _, found = ts.get(t, "/search?q=lisbon"); !strings.Contains(found, "archived</span>") {
		t.Error("search does not find the archived conversation")
	}
	ts.post(t, path+"/archive", url.Values{"archived": {"0"}})
	if _, home = ts.get(t, "/"); !strings.Contains(sidebarOf(t, home), "Offsite in Lisbon") {
		t.Error("unarchived, it is not back in the sidebar")
	}
	// Delete: gone from everywhere, the other conversation whole, the deletion in the audit log.
	code, _, h := ts.post(t, path+"/delete", url.Values{})
	if code != http.StatusSeeOther || h.Get("Location") != "/?deleted=1" {
		t.Fatalf("delete = %d %v", code, h)
	}
	if code, _ := ts.get(t, path); code != http.StatusNotFound {
		t.Errorf("the deleted conversation answers %d", code)
	}
	_, home = ts.get(t, h.Get("Location"))
	if !strings.Contains(home, "The conversation was deleted.") || strings.Contains(sidebarOf(t, home), "Lisbon") || !strings.Contains(home, `data-waiting="1"`) {
		t.Errorf("after the delete the home page shows %s", sidebarOf(t, home))
	}
	if _, found = ts.get(t, "/search?q=offsite"); strings.Contains(found, "Lisbon") {
		t.Error("search still finds the deleted conversation")
	}
	log, err := ts.db.AuditLog(context.Background(), 0, 10)
	if err != nil || len(log) != 1 || log[0].Action != "delete conversation" || !strings.Contains(log[0].Detail, "Offsite in Lisbon") {
		t.Errorf("audit log = %+v %v", log, err)
	}
	// Staff see it on the review desk (with --auth none the one person is staff).
	if _, desk := ts.get(t, "/review"); !strings.Contains(desk, "Deleted conversations") || !strings.Contains(desk, "Offsite in Lisbon") {
		t.Error("the review desk does not list the deletion")
	}
}

func TestErrorPages_AreInTheLayoutWithAWayBack(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/c/999", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	page := b.String()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(page, "<h1>Not Found</h1>") || !strings.Contains(page, "Conversation 999 not found.") ||
		!strings.Contains(page, `href="/">Go to your conversations</a>`) || !strings.Contains(page, `id="sidebar"`) {
		t.Errorf("404 page = %d %.1500s", resp.StatusCode, page)
	}
	// A script still gets the plain message.
	if code, body := ts.get(t, "/c/999"); code != http.StatusNotFound || body != "Conversation 999 not found.\n" {
		t.Errorf("plain 404 = %d %q", code, body)
	}
}

func TestSettings_ProfileTimeZoneTheme(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	code, _, h := ts.post(t, "/settings", url.Values{"display_name": {"  Ann   Lee "}, "time_zone": {"Mars/Olympus"}, "theme": {"dark"}})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("a made-up zone = %d %v", code, h)
	}
	// Zones Go reads but browsers do not know are refused too.
	for _, z := range []string{"posix/Europe/Berlin", "right/UTC", "Local", "Factory"} {
		if code, body, _ := ts.post(t, "/settings", url.Values{"time_zone": {z}}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "is not a time zone") {
			t.Errorf("zone %q = %d", z, code)
		}
	}
	code, _, h = ts.post(t, "/settings", url.Values{"display_name": {"  Ann   Lee "}, "time_zone": {"Asia/Tokyo"}, "theme": {"dark"}})
	if code != http.StatusSeeOther || !strings.Contains(h.Get("Set-Cookie"), "parley_theme=dark") {
		t.Fatalf("save = %d %v", code, h)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/settings?saved=1", nil)
	req.AddCookie(&http.Cookie{Name: "parley_theme", Value: "dark"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	page := string(b)
	for _, want := range []string{`data-theme="dark"`, `data-tz="Asia/Tokyo"`, `<span class="who-name">Ann Lee</span>`, `value="Asia/Tokyo"`, "Saved."} {
		if !strings.Contains(page, want) {
			t.Errorf("the settings page lacks %q", want)
		}
	}
	// Without a password to sign in with, there is none to change.
	if strings.Contains(page, "Change password") {
		t.Error("a password form without passwords")
	}
}

func TestDelete_EndsItsStreamsAndItsIDIsNeverGivenAgain(t *testing.T) {
	ts := newTestServer(t, newDB(t), askerAgent(askerQuestion))
	path := ts.start(t, "asker", "Plan the offsite")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateWaiting)
	s := ts.open(t, path+"/stream?after=0", "")
	s.next()
	if code, _, _ := ts.post(t, path+"/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("delete = %d", code)
	}
	// The page's stream ends (its reconnect finds nothing).
	for s.sc.Scan() {
	}
	if err := s.sc.Err(); err != nil {
		t.Errorf("the stream did not end: %v", err)
	}
	if code, _ := ts.get(t, path+"/stream"); code != http.StatusNotFound {
		t.Errorf("the deleted conversation's stream answers %d", code)
	}
	next := ts.start(t, "asker", "Another plan")
	if convID(t, next) <= id {
		t.Errorf("a new conversation took id %d, at most the deleted %d", convID(t, next), id)
	}
}

func TestDelete_RefusedWhileAStepIsQueued(t *testing.T) {
	db := newDB(t)
	c, err := db.CreateConversation(context.Background(), 0, "asker", "Busy", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartRun(context.Background(), c.ID, domain.Message{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteConversation(context.Background(), c.ID, "ann"); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Errorf("delete with a queued step = %v, want a conflict", err)
	}
}
