package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// apiClient calls the JSON API with one person's access token.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

// token makes an access token for the named account.
func (as *accountsServer) token(t *testing.T, name string) *apiClient {
	t.Helper()
	u, _, err := as.db.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := as.db.CreateToken(context.Background(), u.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	return &apiClient{t: t, base: as.URL, token: secret}
}

// do sends body as JSON (a []byte as is, with contentType) and returns the status and body.
func (a *apiClient) do(method, path string, body any, headers ...string) (int, []byte, http.Header) {
	a.t.Helper()
	var r io.Reader
	ct := "application/json"
	switch b := body.(type) {
	case nil:
	case multipartBody:
		r, ct = bytes.NewReader(b.body), b.contentType
	default:
		j, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if r != nil {
		req.Header.Set("Content-Type", ct)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, nil, resp.Header // a stream never ends by itself
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// json sends a request that must answer want, and decodes the answer into out.
func (a *apiClient) json(method, path string, body any, want int, out any) {
	a.t.Helper()
	code, b, _ := a.do(method, path, body)
	if code != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, code, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

type multipartBody struct {
	body        []byte
	contentType string
}

// multipartOf is a multipart form of fields and files (name → [filename, content]).
func multipartOf(fields map[string][]string, files map[string][2]string) multipartBody {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	for k, f := range files {
		w, _ := mw.CreateFormFile(k, f[0])
		w.Write([]byte(f[1]))
	}
	mw.Close()
	return multipartBody{b.Bytes(), mw.FormDataContentType()}
}

// The API's answers the tests read, as package api defines them.
type (
	apiErr  = api.Error
	apiConv = api.ConversationCreated
)

func TestAPI_OwnersStaffAndStrangers(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann, bob, carol := as.token(t, "ann"), as.token(t, "bob"), as.token(t, "carol")
	// Ann starts a conversation with a file attached, through the API.
	var started apiConv
	ann.json("POST", "/api/v1/conversations", multipartOf(map[string][]string{"agent": {"asker"}, "text": {"Plan the offsite"}},
		map[string][2]string{"files": {"guests.csv", "name\nAnn\n"}}), 201, &started)
	id := started.Conversation.ID
	if started.Conversation.Owner != "ann" {
		t.Fatalf("conversation = %+v", started)
	}
	as.waitState(t, id, domain.StateWaiting)
	// Staff see everyone's waiting questions when they ask for them, as in their inbox.
	if _, body, _ := carol.do("GET", "/api/v1/questions?everyone=true", nil); !bytes.Contains(body, []byte("Plan the offsite")) || !bytes.Contains(body, []byte(`"owner":"ann"`)) {
		t.Errorf("staff's everyone = %s", body)
	}
	if _, body, _ := carol.do("GET", "/api/v1/questions", nil); bytes.Contains(body, []byte("Plan the offsite")) {
		t.Errorf("staff's own list holds ann's question: %s", body)
	}
	conv := fmt.Sprintf("/api/v1/conversations/%d", id)
	routes := []struct {
		method, path string
		body         any
		// the status each person gets: the owner, another person, staff
		ann, bob, carol int
	}{
		{"GET", "/api/v1/me", nil, 200, 200, 200},
		{"GET", "/api/v1/agents", nil, 200, 200, 200},
		{"GET", "/api/v1/conversations", nil, 200, 200, 200},
		{"POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: "My own"}, 201, 201, 201},
		{"GET", conv, nil, 200, 404, 200},
		{"GET", conv + "/events", nil, 200, 404, 200},
		{"GET", conv + "/documents/1", nil, 200, 404, 200},
		{"GET", conv + "/documents/2", nil, 404, 404, 404},
		{"GET", conv + "/export", nil, 200, 404, 200},
		{"GET", "/api/v1/questions", nil, 200, 200, 200},
		{"GET", "/api/v1/questions/1", nil, 200, 404, 200},
		{"POST", "/api/v1/questions/1/decline", api.Decline{Reason: "no"}, 0, 404, 403},
		{"POST", "/api/v1/questions/1/cancel", nil, 0, 404, 403},
		{"POST", "/api/v1/questions/1/answer", map[string]any{"values": map[string]string{"venue": "Lisbon"}}, 200, 404, 403},
		{"POST", conv + "/messages", api.NewMessage{Text: "and lunch"}, 202, 404, 403},
		{"POST", conv + "/retry", nil, 409, 404, 403},
		{"POST", conv + "/stop", nil, 204, 404, 403},
		{"GET", conv + "/versions", nil, 200, 404, 200},
		{"POST", conv + "/versions/0", nil, 200, 404, 403},
		{"POST", conv + "/queued/999/remove", nil, 404, 404, 403},
		{"POST", conv + "/queued/send", nil, 404, 404, 403},
		{"POST", conv + "/messages/999/edit", api.EditMessage{Text: "and dinner"}, 404, 404, 403},
		{"POST", conv + "/regenerate", nil, 202, 404, 403},
		{"GET", "/api/v1/conversations/999", nil, 404, 404, 404},
		{"GET", "/api/v1/conversations/abc", nil, 404, 404, 404},
		{"GET", "/api/v1/openapi.json", nil, 200, 200, 200},
		{"GET", "/api/v1/push/key", nil, 200, 200, 200},
		{"POST", "/api/v1/push/subscriptions", map[string]any{"endpoint": "https://push.example/1", "keys": map[string]string{"p256dh": "", "auth": ""}}, 422, 422, 422},
		{"DELETE", "/api/v1/push/subscriptions", map[string]any{"endpoint": "https://push.example/1"}, 404, 404, 404},
		// An opinion: of the question answered above, its owner's; of a reply there is not.
		{"PUT", "/api/v1/questions/1/feedback", api.FeedbackRequest{Rating: "useful"}, 200, 404, 404},
		{"DELETE", "/api/v1/questions/1/feedback", nil, 204, 404, 404},
		{"PUT", conv + "/replies/999/feedback", api.FeedbackRequest{Rating: "good"}, 404, 404, 404},
		{"DELETE", conv + "/replies/999/feedback", nil, 404, 404, 404},
	}
	// The table holds every route of the API.
	covered := map[string]bool{}
	ids := regexp.MustCompile(`/(conversations|questions)/\d+`)
	docs := regexp.MustCompile(`/documents/\d+$`)
	for _, r := range routes {
		covered[r.method+" "+versionRoutes.Replace(docs.ReplaceAllString(ids.ReplaceAllString(r.path, "/$1/:id"), "/documents/:doc"))] = true
	}
	for _, r := range as.srv.Web.Routes() {
		if strings.Contains(r, "/api/v1") && !covered[r] && !strings.HasSuffix(r, "/*") && !strings.HasSuffix(r, "/api/v1") {
			t.Errorf("route %s is not in the table", r)
		}
	}
	for _, who := range []struct {
		name string
		c    *apiClient
		want func(int, int, int) int
	}{
		{"bob", bob, func(_, b, _ int) int { return b }},
		{"carol", carol, func(_, _, c int) int { return c }},
		{"ann", ann, func(a, _, _ int) int { return a }},
	} {
		for _, r := range routes {
			want := who.want(r.ann, r.bob, r.carol)
			if want == 0 {
				continue // the owner's decline and cancel would end the question the answer needs
			}
			if who.name == "ann" && r.method == "POST" && r.path == conv+"/messages" {
				as.waitState(t, id, domain.StateDone) // the answer's resume has ended
			}
			code, body, h := who.c.do(r.method, r.path, r.body)
			if code != want {
				t.Errorf("%s %s %s = %d, want %d (%.160s)", who.name, r.method, r.path, code, want, body)
			}
			if code >= 400 {
				var e apiErr
				if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Code == "" {
					t.Errorf("%s %s %s: the error is not JSON: %q (%s)", who.name, r.method, r.path, body, h.Get("Content-Type"))
				}
			}
			if want == 404 && bytes.Contains(body, []byte("Plan the offsite")) {
				t.Errorf("%s %s %s leaks the conversation: %.200s", who.name, r.method, r.path, body)
			}
		}
	}
	// Bob's lists hold nothing of ann's, even when he asks for everyone's; staff's does.
	for _, path := range []string{"/api/v1/conversations", "/api/v1/questions", "/api/v1/questions?everyone=true"} {
		if _, body, _ := bob.do("GET", path, nil); bytes.Contains(body, []byte("Plan the offsite")) {
			t.Errorf("bob's %s lists ann's conversation: %s", path, body)
		}
	}
	// The answer names the token it came with, in the record and in the audit.
	rec, _ := as.db.Question(context.Background(), 1)
	if rec.Resolution == nil || rec.Resolution.By != "ann" || rec.Resolution.Via != "token laptop" || rec.Resolution.Values["venue"] != "Lisbon" {
		t.Errorf("resolution = %+v, want ann's answer with her token", rec.Resolution)
	}
	audit, _ := as.db.AuditLog(context.Background(), id, 10)
	if len(audit) != 1 || audit[0].Action != "answer-with-token" || !strings.Contains(audit[0].Detail, "token laptop") {
		t.Errorf("audit = %+v", audit)
	}
	// Staff reviewing the conversation, and its owner's page, see how it was answered.
	staff := as.signIn(t, "carol")
	if _, page := staff.get(fmt.Sprintf("/c/%d/timeline", id)); !strings.Contains(page, "answered question 1 with token laptop") {
		t.Errorf("the timeline does not say the token answered:\n%s", page)
	}
	if _, page := as.signIn(t, "ann").get(fmt.Sprintf("/c/%d", id)); !strings.Contains(page, "by ann") || !strings.Contains(page, "with token laptop") {
		t.Error("the question card does not say the token answered")
	}
}

func TestAPI_TokensOnly(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.token(t, "ann")
	browser := as.signIn(t, "ann")
	// A signed-in browser's cookie does not stand in for a token.
	if code, body, _ := browser.do("GET", "/api/v1/conversations", nil, nil); code != 401 || !strings.Contains(body, "Authorization: Bearer") {
		t.Errorf("cookie alone = %d %s, want 401", code, body)
	}
	for _, bad := range []string{"", "parley_nope", "Basic abc"} {
		c := &apiClient{t: t, base: as.URL, token: bad}
		code, body, h := c.do("GET", "/api/v1/me", nil)
		if code != 401 || h.Get("WWW-Authenticate") == "" {
			t.Errorf("token %q = %d %s", bad, code, body)
		}
	}
	// A token request from another site's page is not a cross-site forgery: it carries no
	// cookie. The same post with a cookie and no token is refused.
	code, body, _ := ann.do("POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: "hi"}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if code != 201 {
		t.Errorf("token post with a foreign origin = %d %s", code, body)
	}
	if code, _, _ := browser.do("POST", "/api/v1/conversations", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}); code != 401 {
		t.Errorf("cookie post = %d, want 401", code)
	}
	// Unknown routes and bad bodies answer in JSON.
	var e apiErr
	ann.json("GET", "/api/v1/nothing", nil, 404, &e)
	ann.json("POST", "/api/v1/conversations", multipartBody{[]byte("{"), "application/json"}, 422, &e)
	if !strings.Contains(e.Error.Message, "JSON") {
		t.Errorf("bad JSON = %+v", e)
	}
	ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "nobody", Text: "hi"}, 404, &e)
	// A revoked token is refused from the next request on.
	u, _, _ := as.db.UserByName(context.Background(), "ann")
	if _, err := as.db.RevokeToken(context.Background(), u.ID, "laptop"); err != nil {
		t.Fatal(err)
	}
	ann.json("GET", "/api/v1/me", nil, 401, &e)
	if !strings.Contains(e.Error.Message, "revoked") {
		t.Errorf("revoked = %+v", e)
	}
}

func TestAPI_MessagesAreRateLimitedLikeTheBrowser(t *testing.T) {
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{MessagesPerMinute: 2}, askerAndReader())
	ann := as.token(t, "ann")
	for i := range 2 {
		ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: fmt.Sprint("hi ", i)}, 201, nil)
	}
	code, body, h := ann.do("POST", "/api/v1/conversations", api.NewConversation{Agent: "asker", Text: "one more"})
	if code != 429 || h.Get("Retry-After") == "" || !strings.Contains(string(body), "too fast") {
		t.Errorf("third message = %d %s (Retry-After %q)", code, body, h.Get("Retry-After"))
	}
}

func TestAPI_AnswerWithAFile(t *testing.T) {
	asker := &scripted{name: "files", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if r := lastResolution(in); r != nil {
			return out.Text(fmt.Sprintf("Got %v.", r.Values["note"]))
		}
		_, err := out.Ask(domain.Question{Message: "Send the log.", Fields: []domain.Field{
			{Name: "log", Kind: domain.KindFile, Required: true}, {Name: "note", Kind: domain.KindText}}})
		return err
	}}
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, asker)
	ann := as.token(t, "ann")
	var started apiConv
	ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "files", Text: "look at this"}, 201, &started)
	as.waitState(t, started.Conversation.ID, domain.StateWaiting)
	var e apiErr
	// JSON cannot carry a file; a multipart answer without it, or with a name the question
	// does not have, is told so field by field.
	ann.json("POST", "/api/v1/questions/1/answer", map[string]any{"values": map[string]any{"log": "app.log"}}, 422, &e)
	if !strings.Contains(e.Error.Fields["log"], "multipart") {
		t.Errorf("file in JSON = %+v", e)
	}
	e = apiErr{}
	ann.json("POST", "/api/v1/questions/1/answer", multipartOf(map[string][]string{"note": {"hi"}, "nite": {"x"}}, nil), 422, &e)
	if !strings.Contains(e.Error.Fields["nite"], "no field") {
		t.Errorf("unknown multipart field = %+v", e)
	}
	e = apiErr{}
	ann.json("POST", "/api/v1/questions/1/answer", multipartOf(map[string][]string{"note": {"hi"}}, nil), 422, &e)
	if e.Error.Fields["log"] == "" {
		t.Errorf("missing file = %+v", e)
	}
	var q api.Question
	ann.json("POST", "/api/v1/questions/1/answer", multipartOf(map[string][]string{"note": {"the nightly run"}},
		map[string][2]string{"log": {"app.log", "ERROR boom\n"}}), 200, &q)
	doc, _ := q.Resolution.Values["log"].(map[string]any)
	if q.State != "answered" || doc["name"] != "app.log" || q.Resolution.Values["note"] != "the nightly run" {
		t.Fatalf("answer = %+v", q)
	}
	// Cancelling it now is a conflict, whatever the question allows.
	ann.json("POST", "/api/v1/questions/1/cancel", nil, 409, &e)
}
