package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// startAndAnswer has p start a conversation with the asker and answer its question.
func startAndAnswer(t *testing.T, as *accountsServer, p *person, text, venue string) string {
	t.Helper()
	code, body, h := p.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {text}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("start = %d %s", code, body)
	}
	conv := h.Get("Location")
	id := convID(t, conv)
	as.waitState(t, id, domain.StateWaiting)
	pending, _ := as.db.Inbox(t.Context(), 0, 100)
	var qid int64
	for _, it := range pending {
		if it.Conversation.ID == id {
			qid = it.Question.ID
		}
	}
	if venue != "" {
		as.clock.Add(90 * time.Second)
		if code, body, _ := p.do(http.MethodPost, "/questions/"+itoa(qid)+"/answer", url.Values{"venue": {venue}}, nil); code != 200 {
			t.Fatalf("answer = %d %s", code, body)
		}
		as.waitState(t, id, domain.StateDone)
	}
	return conv
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestReviewDesk(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann, bob, carol := as.signIn(t, "ann"), as.signIn(t, "bob"), as.signIn(t, "carol")
	annConv := startAndAnswer(t, as, ann, "Plan the summer party", "The Glasshouse")
	bobConv := startAndAnswer(t, as, bob, "Book a room for the retro", "")

	t.Run("SearchAnAnswer", func(t *testing.T) {
		code, page := carol.get("/review?q=glasshouse")
		if code != 200 || !strings.Contains(page, `href="`+annConv+`/timeline"`) || !strings.Contains(page, "<mark>Glasshouse</mark>") || !strings.Contains(page, "in an answer") {
			t.Fatalf("search = %d, page lacks the hit:\n%.2000s", code, page)
		}
		if strings.Contains(page, bobConv+"/timeline") {
			t.Error("bob's conversation matched glasshouse")
		}
	})
	t.Run("Filters", func(t *testing.T) {
		_, page := carol.get("/review?state=waiting")
		if !strings.Contains(page, bobConv+"/timeline") || strings.Contains(page, annConv+"/timeline") {
			t.Error("state=waiting does not keep bob's waiting conversation alone")
		}
		_, page = carol.get("/review?user=ann")
		if !strings.Contains(page, annConv+"/timeline") || strings.Contains(page, bobConv+"/timeline") {
			t.Error("user=ann does not keep ann's alone")
		}
		_, page = carol.get("/review?from=2026-11-23")
		if strings.Contains(page, annConv+"/timeline") || !strings.Contains(page, "No conversation matches") {
			t.Error("from a later day still lists today's conversations")
		}
		_, page = carol.get("/review?from=2026-11-22&to=2026-11-22&agent=asker")
		if !strings.Contains(page, annConv+"/timeline") || !strings.Contains(page, bobConv+"/timeline") {
			t.Error("today's conversations with the asker are not listed")
		}
		code, page := carol.get("/review?state=sleeping")
		if code != http.StatusUnprocessableEntity || !strings.Contains(page, `&#34;sleeping&#34; is not a state.`) {
			t.Errorf("bad state = %d", code)
		}
	})
	t.Run("Inbox", func(t *testing.T) {
		_, page := carol.get("/inbox")
		if !strings.Contains(page, "Which venue?") || !strings.Contains(page, "Book a room for the retro") || !strings.Contains(page, "<td>bob</td>") {
			t.Errorf("staff inbox lacks bob's question:\n%.1500s", page)
		}
		_, page = ann.get("/inbox")
		if !strings.Contains(page, "Nothing is waiting.") {
			t.Error("ann's inbox is not empty")
		}
		_, page = bob.get("/")
		if !strings.Contains(page, `data-waiting="1"`) {
			t.Error("bob's top bar does not count his waiting question")
		}
	})
	t.Run("Timeline", func(t *testing.T) {
		_, page := carol.get(annConv + "/timeline")
		for _, want := range []string{"Plan the summer party", "<strong class=\"entry-who\">ann</strong>", "asked question 1 (1 field)",
			"Venue", "text (required)", "answered question 1, after 1 min 30 s", "The Glasshouse", "Noted: The Glasshouse (answered)."} {
			if !strings.Contains(page, want) {
				t.Errorf("timeline lacks %q", want)
			}
		}
	})
	t.Run("ExportMarkdown", func(t *testing.T) {
		code, body, h := carol.do(http.MethodGet, annConv+"/export.md", nil, nil)
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/markdown") || !strings.Contains(h.Get("Content-Disposition"), "attachment; filename=parley-conversation-") {
			t.Fatalf("export.md = %d %v", code, h)
		}
		for _, want := range []string{"# Plan the summer party\n", "- Person: ann\n", "ann wrote\n\n> Plan the summer party\n", "Fields:\n- Venue (text (required))\n", "Answers:\n- Venue: The Glasshouse\n"} {
			if !strings.Contains(body, want) {
				t.Errorf("markdown lacks %q:\n%s", want, body)
			}
		}
	})
	t.Run("ExportJSON", func(t *testing.T) {
		code, body, _ := ann.do(http.MethodGet, annConv+"/export.json", nil, nil)
		if code != 200 {
			t.Fatalf("export.json = %d", code)
		}
		var out struct {
			Conversation struct {
				Owner, Title string
			}
			Questions []struct {
				Message    string
				Resolution struct {
					Outcome string
					Values  map[string]any
					By      string
				}
				WaitedSeconds float64 `json:"waited_seconds"`
			}
			Events []struct{ Kind string }
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		if out.Conversation.Owner != "ann" || len(out.Questions) != 1 || out.Questions[0].Resolution.By != "ann" ||
			out.Questions[0].Resolution.Values["venue"] != "The Glasshouse" {
			t.Fatalf("export = %+v", out)
		}
		for _, ev := range out.Events {
			if ev.Kind == "text_delta" {
				t.Fatal("the export holds streamed pieces")
			}
		}
	})
	t.Run("Figures", func(t *testing.T) {
		code, page := carol.get("/review/figures?days=7")
		if code != 200 || !strings.Contains(page, "<svg") || !strings.Contains(page, `role="img"`) {
			t.Fatalf("figures = %d:\n%s", code, page)
		}
		if !strings.Contains(page, "2 questions asked, 1 answered") {
			t.Errorf("today's bar does not say 2 asked, 1 answered:\n%.3000s", page)
		}
		// One agent's figures: another agent has asked nothing.
		_, page = carol.get("/review/figures?days=7&agent=someone-else")
		if !strings.Contains(page, "No questions were asked in these 7 days.") || !strings.Contains(page, `href="/review/figures?days=7&amp;agent=asker"`) {
			t.Errorf("figures of another agent:\n%.3000s", page)
		}
	})
}
