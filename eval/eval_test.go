package eval_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

var ctx = context.Background()

// install is a database with a conversation of two versions (a reply regenerated), a
// question answered and one declined, opinions of both kinds, a label and a note.
func install(t testing.TB) (db *store.DB, party, other int64) {
	t.Helper()
	db = storetest.New(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ann, err := db.CreateUser(ctx, "ann", "h", domain.RoleUser)
	must(err)
	c, err := db.CreateConversation(ctx, ann.ID, "event-planner", "Plan a party", "")
	must(err)
	sent, err := db.StartRun(ctx, c.ID, domain.Message{Text: "Plan a party for 30", Author: "ann"})
	must(err)
	_, in, err := db.BeginStep(ctx, sent.Step)
	must(err)
	q, err := db.AskQuestion(ctx, in.RunID, domain.Question{Message: "Where?", Asker: "Venue specialist", Fields: []domain.Field{{Name: "city", Kind: domain.KindText}}})
	must(err)
	_, err = db.FinishStep(ctx, sent.Step, nil, nil)
	must(err)
	step, err := db.Resolve(ctx, domain.Resolution{QuestionID: q.ID, Outcome: domain.Answered, Values: map[string]any{"city": "Lisbon"}, By: "ann"})
	must(err)
	_, in, err = db.BeginStep(ctx, step)
	must(err)
	reply, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: "m1", Author: "Coordinator", Text: "A party in Lisbon."})
	must(err)
	_, err = db.FinishStep(ctx, step, nil, nil)
	must(err)
	_, err = db.SetFeedback(ctx, domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply.ID, UserID: ann.ID, Rating: domain.RatingBad, Comment: "No budget.", Reasons: []string{"wrong"}})
	must(err)
	_, err = db.SetFeedback(ctx, domain.Feedback{ConversationID: c.ID, Item: domain.ItemQuestion, ItemID: q.ID, UserID: ann.ID, Rating: domain.RatingUnneeded})
	must(err)
	// Regenerated: a second version, whose reply is rated good.
	step, _, err = db.Regenerate(ctx, c.ID, "ann", "r1")
	must(err)
	_, in, err = db.BeginStep(ctx, step)
	must(err)
	again, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: "m2", Author: "Coordinator", Text: "A party in Lisbon, $3000."})
	must(err)
	_, err = db.FinishStep(ctx, step, nil, nil)
	must(err)
	_, err = db.SetFeedback(ctx, domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: again.ID, UserID: ann.ID, Rating: domain.RatingGood})
	must(err)
	must(db.SetLabels(ctx, "sam", []string{"venues"}))
	must(db.LabelConversation(ctx, c.ID, "venues", true, "sam"))
	_, err = db.AddNote(ctx, c.ID, "sam", "Budget question missing.")
	must(err)

	o, err := db.CreateConversation(ctx, ann.ID, "budget-analyst", "A budget", "")
	must(err)
	sent, err = db.StartRun(ctx, o.ID, domain.Message{Text: "Budget?", Author: "ann"})
	must(err)
	_, in, err = db.BeginStep(ctx, sent.Step)
	must(err)
	dq, err := db.AskQuestion(ctx, in.RunID, domain.Question{Message: "How much?", Asker: "Budget analyst", Fields: []domain.Field{{Name: "usd", Kind: domain.KindNumber}}})
	must(err)
	_, err = db.FinishStep(ctx, sent.Step, nil, nil)
	must(err)
	_, err = db.Resolve(ctx, domain.Resolution{QuestionID: dq.ID, Outcome: domain.Declined, Reason: "Not yet.", By: "ann"})
	must(err)
	return db, c.ID, o.ID
}

func export(t *testing.T, db *store.DB, f eval.Filter) []eval.Record {
	t.Helper()
	var b bytes.Buffer
	n, err := eval.Write(ctx, &b, db, f, func(agent string) string {
		if agent == "event-planner" || agent == "budget-analyst" {
			return "builtin"
		}
		return "unknown"
	})
	if err != nil {
		t.Fatal(err)
	}
	schema := resolved(t)
	var out []eval.Record
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var doc any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("a line is not JSON: %v\n%s", err, sc.Bytes())
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("a line does not validate against the schema: %v\n%s", err, sc.Bytes())
		}
		var r eval.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if len(out) != n {
		t.Errorf("Write said %d lines, wrote %d", n, len(out))
	}
	return out
}

func resolved(t testing.TB) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(eval.JSONSchema, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A line a version of each conversation, each valid against the documented schema: its
// messages, its questions with their fields, answer or decline and time waited, the opinions
// of its own replies and questions, staff's labels; their notes only when asked for.
func TestWrite(t *testing.T) {
	db, party, other := install(t)
	recs := export(t, db, eval.Filter{})
	var got []string
	for _, r := range recs {
		var msgs, qs, fb []string
		for _, m := range r.Messages {
			msgs = append(msgs, m.Role+":"+m.Text)
		}
		for _, q := range r.Questions {
			qs = append(qs, fmt.Sprintf("%s %s %v %s waited=%v", q.Message, q.Outcome, q.Values, q.Reason, q.Waited >= 0 && q.ResolvedAt != nil))
		}
		for _, f := range r.Feedback {
			fb = append(fb, fmt.Sprintf("%s %s %s %v", f.Item, f.Rating, f.Comment, f.Reasons))
		}
		got = append(got, fmt.Sprintf("%d v%d shown=%v %s %s %q %q %q %v notes=%d", r.Conversation.ID, r.Version, r.Shown, r.Conversation.Agent,
			r.Conversation.Backend, msgs, qs, fb, r.Labels, len(r.Notes)))
	}
	want := []string{
		fmt.Sprintf(`%d v0 shown=false event-planner builtin ["user:Plan a party for 30" "agent:A party in Lisbon."] ["Where? answered map[city:Lisbon]  waited=true"] ["reply bad No budget. [wrong]" "question unneeded  []"] [venues] notes=0`, party),
		// The regenerated version goes on from the person's message: the question was asked
		// in the first only, and its opinion goes with it.
		fmt.Sprintf(`%d v1 shown=true event-planner builtin ["user:Plan a party for 30" "agent:A party in Lisbon, $3000."] [] ["reply good  []"] [venues] notes=0`, party),
		fmt.Sprintf(`%d v0 shown=true budget-analyst builtin ["user:Budget?"] ["How much? declined map[] Not yet. waited=true"] [] [] notes=0`, other),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("export =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Filters: an agent, a label, a date; notes when asked.
	if recs := export(t, db, eval.Filter{Agent: "budget-analyst"}); len(recs) != 1 || recs[0].Conversation.ID != other {
		t.Errorf("the budget analyst's = %d lines", len(recs))
	}
	if recs := export(t, db, eval.Filter{Label: "venues"}); len(recs) != 2 || recs[0].Conversation.ID != party {
		t.Errorf("labelled venues = %d lines", len(recs))
	}
	if recs := export(t, db, eval.Filter{Since: time.Now().Add(time.Hour)}); len(recs) != 0 {
		t.Errorf("since an hour from now = %d lines", len(recs))
	}
	if recs := export(t, db, eval.Filter{WithNotes: true, Label: "venues"}); len(recs) != 2 || len(recs[0].Notes) != 1 || recs[0].Notes[0].Body != "Budget question missing." {
		t.Errorf("with notes = %+v", recs)
	}
}

// The schema is strict enough to catch a line that is not the format.
func TestSchema_RefusesWhatIsNotTheFormat(t *testing.T) {
	schema := resolved(t)
	good := `{"schema":"parley.eval/1","conversation":{"id":1,"title":"t","agent":"a","backend":"builtin","owner":"ann","state":"done","created_at":"2026-11-29T10:00:00Z","updated_at":"2026-11-29T10:00:00Z"},"version":0,"shown":true,"messages":[],"questions":[],"feedback":[],"labels":[]}`
	for name, line := range map[string]string{
		"good":            good,
		"another schema":  strings.Replace(good, `parley.eval/1`, `parley.eval/2`, 1),
		"a rating":        strings.Replace(good, `"feedback":[]`, `"feedback":[{"item":"reply","item_id":1,"by":"ann","rating":"meh","comment":"","reasons":[],"at":"2026-11-29T10:00:00Z"}]`, 1),
		"no labels":       strings.Replace(good, `,"labels":[]`, ``, 1),
		"a stray field":   strings.Replace(good, `"shown":true`, `"shown":true,"extra":1`, 1),
		"an unknown role": strings.Replace(good, `"messages":[]`, `"messages":[{"event_id":1,"role":"robot","author":"x","text":"","at":"2026-11-29T10:00:00Z"}]`, 1),
	} {
		var doc any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); (err == nil) != (name == "good") {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
}
