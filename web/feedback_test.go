package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
	"github.com/parley-chat/parley/web"
)

// repliedAndAsked starts ann's conversation with the asker, answers its question, and
// returns the conversation with its agent reply's event and the question.
func repliedAndAsked(t *testing.T, as *accountsServer, ann *apiClient) (convID, reply, question int64) {
	t.Helper()
	var started struct {
		Conversation api.Conversation `json:"conversation"`
	}
	ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: "Plan the offsite"}, 201, &started)
	convID = started.Conversation.ID
	as.waitState(t, convID, domain.StateWaiting)
	question = 1
	ann.json("POST", "/api/v1/questions/1/answer", map[string]any{"values": map[string]string{"venue": "Lisbon"}}, 200, nil)
	as.waitState(t, convID, domain.StateDone)
	evs, err := as.db.Events(context.Background(), convID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage {
			reply = ev.ID
		}
	}
	if reply == 0 {
		t.Fatal("no agent reply")
	}
	return convID, reply, question
}

// A person rates their conversation's reply and question from its page: the toggles are
// pressed as they stand, "Bad reply" opens "What was wrong?", the form keeps what was typed
// when it is refused, and pressing a toggle again takes the opinion back. Another person, and
// staff reading, find nothing to rate.
func TestFeedback_Page(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	bob, carol := as.signIn(t, "bob"), as.signIn(t, "carol")
	annAPI := as.token(t, "ann")
	annPage := as.signIn(t, "ann")
	convID, reply, question := repliedAndAsked(t, as, annAPI)
	replyURL := fmt.Sprintf("/c/%d/feedback/reply/%d", convID, reply)

	// The page offers both bars, nothing pressed.
	_, page, _ := annPage.do(http.MethodGet, fmt.Sprintf("/c/%d", convID), nil, nil)
	for _, want := range []string{`id="fb-reply-` + fmt.Sprint(reply) + `"`, `id="fb-question-1"`, ">Good reply<", ">Bad reply<", ">Useful question<", ">Unneeded question<"} {
		if !strings.Contains(page, want) {
			t.Errorf("the conversation page lacks %s", want)
		}
	}
	if strings.Contains(page, `aria-pressed="true"`) {
		t.Error("a toggle is pressed before any opinion")
	}

	// Bad reply: stored at once, the form opens.
	code, body, _ := annPage.do(http.MethodPost, replyURL+"?rating=bad", url.Values{}, nil)
	if code != 200 || !strings.Contains(body, "What was wrong?") || !strings.Contains(body, `aria-pressed="true"`) || !strings.Contains(body, "Send feedback") {
		t.Fatalf("Bad reply = %d %.600s", code, body)
	}
	// A reason not listed: refused, with what was typed kept.
	code, body, _ = annPage.do(http.MethodPost, replyURL, url.Values{"rating": {"bad"}, "send": {"1"}, "comment": {"It forgot the budget."}, "reasons": {"boring"}}, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "It forgot the budget.") || !strings.Contains(body, "boring") || !strings.Contains(body, `aria-invalid="true"`) {
		t.Errorf("a reason not listed = %d %.800s", code, body)
	}
	code, body, _ = annPage.do(http.MethodPost, replyURL, url.Values{"rating": {"bad"}, "send": {"1"}, "comment": {"It forgot the budget."}, "reasons": {"wrong"}}, nil)
	if code != 200 || !strings.Contains(body, "Thank you") {
		t.Fatalf("Send feedback = %d %.600s", code, body)
	}
	got, err := as.db.Feedback(context.Background(), convID, 0)
	if err != nil || len(got) != 1 || got[0].Rating != domain.RatingBad || got[0].Comment != "It forgot the budget." || fmt.Sprint(got[0].Reasons) != "[wrong]" || got[0].By != "ann" {
		t.Fatalf("stored = %+v, %v", got, err)
	}
	// The page shows it pressed, and the question rated too.
	if code, _, _ := annPage.do(http.MethodPost, fmt.Sprintf("/c/%d/feedback/question/%d?rating=unneeded", convID, question), url.Values{}, nil); code != 200 {
		t.Fatalf("Unneeded question = %d", code)
	}
	_, page, _ = annPage.do(http.MethodGet, fmt.Sprintf("/c/%d", convID), nil, nil)
	if n := strings.Count(page, `aria-pressed="true"`); n != 2 {
		t.Errorf("%d toggles pressed on the page; want the bad reply and the unneeded question", n)
	}
	// Pressed again: taken back.
	if code, body, _ := annPage.do(http.MethodPost, replyURL+"?rating=", url.Values{}, nil); code != 200 || strings.Contains(body, `aria-pressed="true"`) {
		t.Errorf("taking it back = %d %.300s", code, body)
	}
	if got, _ := as.db.Feedback(context.Background(), convID, 0); len(got) != 1 || got[0].Item != domain.ItemQuestion {
		t.Errorf("after taking the reply's back: %+v", got)
	}

	// Not theirs: another person, and staff reading it, get 404 and store nothing; staff's
	// page shows no bar.
	for name, p := range map[string]*person{"bob": bob, "carol": carol} {
		if code, _, _ := p.do(http.MethodPost, replyURL+"?rating=good", url.Values{}, nil); code != 404 {
			t.Errorf("%s rating ann's reply = %d; want 404", name, code)
		}
	}
	if _, page, _ := carol.do(http.MethodGet, fmt.Sprintf("/c/%d", convID), nil, nil); strings.Contains(page, "Good reply") {
		t.Error("staff reading the conversation are offered a rating")
	}
	if got, _ := as.db.Feedback(context.Background(), convID, 0); len(got) != 1 {
		t.Errorf("after strangers tried: %+v", got)
	}

	// Staff read it on the timeline and in the export.
	if _, page, _ := carol.do(http.MethodGet, fmt.Sprintf("/c/%d/timeline", convID), nil, nil); !strings.Contains(page, "rated question 1 unneeded") {
		t.Errorf("the timeline does not show ann's opinion of the question")
	}
	if _, export, _ := carol.do(http.MethodGet, fmt.Sprintf("/c/%d/export.json", convID), nil, nil); !strings.Contains(export, `"rating": "unneeded"`) || !strings.Contains(export, `"by": "ann"`) {
		t.Errorf("the JSON export lacks the feedback: %.300s", export[strings.Index(export, `"feedback"`):])
	}
}

// The API: PUT an opinion on the reply or the question, read it back with the conversation,
// DELETE it; another person and staff get 404; a rating the item does not have is 422.
func TestFeedback_API(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann, bob, carol := as.token(t, "ann"), as.token(t, "bob"), as.token(t, "carol")
	convID, reply, question := repliedAndAsked(t, as, ann)
	replyPath := fmt.Sprintf("/api/v1/conversations/%d/replies/%d/feedback", convID, reply)
	questionPath := fmt.Sprintf("/api/v1/questions/%d/feedback", question)

	var f api.Feedback
	ann.json("PUT", replyPath, api.FeedbackRequest{Rating: "bad", Comment: "Too vague.", Reasons: []string{"wrong"}}, 200, &f)
	if f.Rating != "bad" || f.By != "ann" || f.Item != "reply" || f.ItemID != reply || f.Comment != "Too vague." {
		t.Errorf("PUT = %+v", f)
	}
	ann.json("PUT", replyPath, api.FeedbackRequest{Rating: "good"}, 200, &f)
	ann.json("PUT", questionPath, api.FeedbackRequest{Rating: "useful"}, 200, nil)
	var state api.ConversationState
	ann.json("GET", fmt.Sprintf("/api/v1/conversations/%d", convID), nil, 200, &state)
	if len(state.Feedback) != 2 || state.Feedback[0].Rating != "good" || state.Feedback[0].Comment != "" || state.Feedback[1].Rating != "useful" {
		t.Errorf("the conversation's feedback = %+v", state.Feedback)
	}
	for _, c := range []struct {
		who  *apiClient
		path string
		body any
		want int
	}{
		{ann, replyPath, api.FeedbackRequest{Rating: "useful"}, 422},
		{ann, questionPath, api.FeedbackRequest{Rating: "good"}, 422},
		{ann, replyPath, `not json`, 422},
		{bob, replyPath, api.FeedbackRequest{Rating: "good"}, 404},
		{carol, replyPath, api.FeedbackRequest{Rating: "good"}, 404},
		{bob, questionPath, api.FeedbackRequest{Rating: "useful"}, 404},
		{ann, fmt.Sprintf("/api/v1/conversations/%d/replies/%d/feedback", convID, reply+1000), api.FeedbackRequest{Rating: "good"}, 404},
	} {
		if code, body, _ := c.who.do("PUT", c.path, c.body); code != c.want {
			t.Errorf("PUT %s %v = %d %s; want %d", c.path, c.body, code, body, c.want)
		}
	}
	if code, _, _ := bob.do("DELETE", replyPath, nil); code != 404 {
		t.Errorf("bob's DELETE = %d; want 404", code)
	}
	if code, _, _ := ann.do("DELETE", replyPath, nil); code != 204 {
		t.Errorf("DELETE = %d; want 204", code)
	}
	ann.json("GET", fmt.Sprintf("/api/v1/conversations/%d", convID), nil, 200, &state)
	if len(state.Feedback) != 1 || state.Feedback[0].Item != "question" {
		t.Errorf("after DELETE, feedback = %+v", state.Feedback)
	}
}

// Staff keep the list of reasons: what they save is what the form offers; a list refused
// (a reason twice) comes back as typed, with why; anyone else may not.
func TestFeedback_StaffKeepTheReasons(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	carol, bob := as.signIn(t, "carol"), as.signIn(t, "bob")
	if code, _, _ := bob.do(http.MethodPost, "/review/reasons", url.Values{"items": {"mine"}}, nil); code != 404 {
		t.Errorf("bob saving reasons = %d; want 404, as every staff page", code)
	}
	code, page, _ := carol.do(http.MethodPost, "/review/reasons", url.Values{"items": {"wrong\nwrong"}}, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(page, "listed twice") || !strings.Contains(page, "wrong\nwrong") {
		t.Errorf("a reason twice = %d %.300s", code, page)
	}
	if code, _, h := carol.do(http.MethodPost, "/review/reasons", url.Values{"items": {"  out of date \n\nrude\r\nwrong"}}, nil); code != http.StatusSeeOther || h.Get("Location") != "/review/reasons?saved=1" {
		t.Fatalf("save = %d %v", code, h)
	}
	got, err := as.db.FeedbackReasons(context.Background())
	if err != nil || fmt.Sprint(got) != "[out of date rude wrong]" {
		t.Errorf("reasons = %q, %v", got, err)
	}
	if _, page, _ := carol.do(http.MethodGet, "/review/reasons?saved=1", nil, nil); !strings.Contains(page, "out of date\nrude\nwrong") || !strings.Contains(page, "Saved.") {
		t.Errorf("the page after saving: %.500s", page)
	}
}

// A bad reply puts its conversation in staff's review queue, counted beside Review; staff
// assign it and mark it reviewed, and it leaves the queue; new feedback brings it back.
// Nobody but staff reaches the queue.
func TestFeedback_ReviewQueue(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.token(t, "ann")
	carol, bob := as.signIn(t, "carol"), as.signIn(t, "bob")
	convID, reply, _ := repliedAndAsked(t, as, ann)
	replyPath := fmt.Sprintf("/api/v1/conversations/%d/replies/%d/feedback", convID, reply)
	ann.json("PUT", replyPath, api.FeedbackRequest{Rating: "bad", Comment: "Wrong venue."}, 200, nil)

	_, page, _ := carol.do(http.MethodGet, "/review/queue", nil, nil)
	if !strings.Contains(page, "Plan the offsite") || !strings.Contains(page, "bad reply") || !strings.Contains(page, `id="review-count"`) {
		t.Fatalf("the queue lacks the bad reply: %.2000s", page)
	}
	if code, _, _ := bob.do(http.MethodGet, "/review/queue", nil, nil); code != 404 {
		t.Errorf("bob's queue = %d; want 404", code)
	}
	carolID := int64(0)
	if u, _, err := as.db.UserByName(context.Background(), "carol"); err == nil {
		carolID = u.ID
	}
	if code, _, h := carol.do(http.MethodPost, fmt.Sprintf("/review/queue/%d/assign?trouble=bad+reply", convID), url.Values{"assignee": {fmt.Sprint(carolID)}}, nil); code != http.StatusSeeOther || h.Get("Location") != "/review/queue?trouble=bad+reply" {
		t.Fatalf("assign = %d %v", code, h)
	}
	if _, page, _ := carol.do(http.MethodGet, fmt.Sprintf("/review/queue?assignee=%d", carolID), nil, nil); !strings.Contains(page, "Plan the offsite") {
		t.Error("carol's own queue lacks the conversation assigned to her")
	}
	if code, _, _ := carol.do(http.MethodPost, fmt.Sprintf("/review/queue/%d/reviewed", convID), url.Values{}, nil); code != http.StatusSeeOther {
		t.Fatalf("mark reviewed = %d", code)
	}
	if _, page, _ := carol.do(http.MethodGet, "/review/queue", nil, nil); strings.Contains(page, "Plan the offsite") || strings.Contains(page, `id="review-count"`) {
		t.Error("reviewed, it is still in the queue")
	}
	// New feedback, a minute later, brings it back.
	as.clock.Add(time.Minute)
	ann.json("PUT", replyPath, api.FeedbackRequest{Rating: "good"}, 200, nil)
	ann.json("PUT", replyPath, api.FeedbackRequest{Rating: "bad", Comment: "Still wrong."}, 200, nil)
	if _, page, _ := carol.do(http.MethodGet, "/review/queue", nil, nil); !strings.Contains(page, "Plan the offsite") || !strings.Contains(page, "reviewed before by carol") {
		t.Error("new feedback did not bring it back")
	}
	// Staff read what was wrong on the timeline.
	if _, page, _ := carol.do(http.MethodGet, fmt.Sprintf("/c/%d/timeline", convID), nil, nil); !strings.Contains(page, "rated a reply bad") || !strings.Contains(page, "Still wrong.") {
		t.Error("the timeline does not show the bad reply's comment")
	}
}

// Staff add a note (Markdown, sanitized) and a label on a conversation's timeline; the
// person it belongs to never sees either: not on the timeline, the conversation's page, its
// stream, its exports or the API; another person and the owner cannot add them (404).
func TestStaffNotesAndLabels_StaffAlone(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	annAPI := as.token(t, "ann")
	carol, ann, bob := as.signIn(t, "carol"), as.signIn(t, "ann"), as.signIn(t, "bob")
	convID, _, _ := repliedAndAsked(t, as, annAPI)
	timeline := fmt.Sprintf("/c/%d/timeline", convID)

	if code, _, h := carol.do(http.MethodPost, "/review/labels", url.Values{"items": {"venues\nsecret-label"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("save labels = %d %v", code, h)
	}
	note := "The venue list is **stale**. <img src=x onerror=alert(1)> <b data-on:click=\"@post('/x')\">x</b> secret-note"
	if code, _, h := carol.do(http.MethodPost, fmt.Sprintf("/c/%d/notes", convID), url.Values{"note": {note}}, nil); code != http.StatusSeeOther || h.Get("Location") != timeline+"#notes" {
		t.Fatalf("add note = %d %v", code, h)
	}
	if code, _, _ := carol.do(http.MethodPost, fmt.Sprintf("/c/%d/labels", convID), url.Values{"label": {"secret-label"}, "on": {"1"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("add label = %d", code)
	}
	// An empty note: refused, on the timeline, with why.
	if code, page, _ := carol.do(http.MethodPost, fmt.Sprintf("/c/%d/notes", convID), url.Values{"note": {"   "}}, nil); code != http.StatusUnprocessableEntity || !strings.Contains(page, "Write the note first.") {
		t.Errorf("an empty note = %d", code)
	}
	_, page, _ := carol.do(http.MethodGet, timeline, nil, nil)
	for _, want := range []string{"<strong>stale</strong>", "secret-note", `class="badge">secret-label<`, "Add note", ">Note<"} {
		if !strings.Contains(page, want) {
			t.Errorf("staff's timeline lacks %s", want)
		}
	}
	for _, bad := range []string{`onerror=`, `@post('/x')`, `@post(&#39;/x&#39;)`} {
		if strings.Contains(page, bad) {
			t.Errorf("the note's markup came through: %s", bad)
		}
	}
	// The person: nothing of it anywhere of theirs.
	for _, path := range []string{timeline, fmt.Sprintf("/c/%d", convID), fmt.Sprintf("/c/%d/export.json", convID), fmt.Sprintf("/c/%d/export.md", convID)} {
		_, body, _ := ann.do(http.MethodGet, path, nil, nil)
		if strings.Contains(body, "secret-note") || strings.Contains(body, "secret-label") || strings.Contains(body, "Staff notes") {
			t.Errorf("ann sees staff's notes or labels on %s", path)
		}
	}
	for _, path := range []string{fmt.Sprintf("/api/v1/conversations/%d", convID), fmt.Sprintf("/api/v1/conversations/%d/export", convID)} {
		_, body, _ := annAPI.do("GET", path, nil)
		if strings.Contains(string(body), "secret-note") || strings.Contains(string(body), "secret-label") {
			t.Errorf("ann's API sees staff's notes or labels on %s", path)
		}
	}
	// (Notes and labels are no events of the conversation: its streams never carry them.)
	if evs, err := as.db.Events(context.Background(), convID, 0); err != nil || strings.Contains(fmt.Sprint(evs), "secret") {
		t.Errorf("the conversation's events hold staff's notes or labels: %v", err)
	}
	for name, p := range map[string]*person{"ann": ann, "bob": bob} {
		if code, _, _ := p.do(http.MethodPost, fmt.Sprintf("/c/%d/notes", convID), url.Values{"note": {"mine"}}, nil); code != 404 {
			t.Errorf("%s adding a note = %d; want 404", name, code)
		}
		if code, _, _ := p.do(http.MethodPost, fmt.Sprintf("/c/%d/labels", convID), url.Values{"label": {"venues"}, "on": {"1"}}, nil); code != 404 {
			t.Errorf("%s adding a label = %d; want 404", name, code)
		}
	}
}

// Staff download the conversations as JSON Lines from Review, filtered by agent: a line a
// version, with the opinions; without staff's notes unless asked.
func TestExportForEvaluation(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	annAPI := as.token(t, "ann")
	carol := as.signIn(t, "carol")
	convID, reply, _ := repliedAndAsked(t, as, annAPI)
	annAPI.json("PUT", fmt.Sprintf("/api/v1/conversations/%d/replies/%d/feedback", convID, reply), api.FeedbackRequest{Rating: "bad", Comment: "Wrong venue."}, 200, nil)
	if code, _, _ := carol.do(http.MethodPost, fmt.Sprintf("/c/%d/notes", convID), url.Values{"note": {"secret-note"}}, nil); code != http.StatusSeeOther {
		t.Fatal(code)
	}
	_, page, _ := carol.do(http.MethodGet, "/review?agent=asker&from=2026-01-01", nil, nil)
	if !strings.Contains(page, `href="/review/export.jsonl?agent=asker&amp;from=2026-01-01"`) {
		t.Errorf("Review's export link lacks the filters")
	}
	code, body, h := carol.do(http.MethodGet, "/review/export.jsonl?agent=asker&from=2026-01-01", nil, nil)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/x-ndjson") || !strings.Contains(h.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export = %d %v", code, h)
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"schema":"parley.eval/1"`) || !strings.Contains(lines[0], `"comment":"Wrong venue."`) || strings.Contains(body, "secret-note") {
		t.Errorf("export lines = %q", lines)
	}
	if _, body, _ := carol.do(http.MethodGet, "/review/export.jsonl?agent=nobody", nil, nil); body != "" {
		t.Errorf("another agent's = %q", body)
	}
	if code, _, _ := carol.do(http.MethodGet, "/review/export.jsonl?from=yesterday", nil, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("from=yesterday = %d; want 422", code)
	}
}

// Figures: the share of replies rated good and bad, of questions rated unneeded, per agent,
// and the time from a bad reply to its review, as a chart and as tables.
func TestFeedback_Figures(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	annAPI := as.token(t, "ann")
	carol := as.signIn(t, "carol")
	convID, reply, question := repliedAndAsked(t, as, annAPI)
	annAPI.json("PUT", fmt.Sprintf("/api/v1/conversations/%d/replies/%d/feedback", convID, reply), api.FeedbackRequest{Rating: "bad"}, 200, nil)
	annAPI.json("PUT", fmt.Sprintf("/api/v1/questions/%d/feedback", question), api.FeedbackRequest{Rating: "unneeded"}, 200, nil)
	as.clock.Add(20 * time.Minute) // within the session's idle limit
	if code, _, _ := carol.do(http.MethodPost, fmt.Sprintf("/review/queue/%d/reviewed", convID), url.Values{}, nil); code != http.StatusSeeOther {
		t.Fatal(code)
	}
	_, page, _ := carol.do(http.MethodGet, "/review/figures", nil, nil)
	for _, want := range []string{"What people thought", "Opinions per day", "1 replies rated (0% good, 100% bad), 1 questions rated (100% unneeded)", ">" + views.Took(20*time.Minute) + "<", "feedback-agents"} {
		if !strings.Contains(page, want) {
			t.Errorf("the figures lack %q", want)
		}
	}
}
