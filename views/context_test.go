package views

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/humantext"
)

// withContext renders a pending question card with the given context and returns its
// q-context container (nil when there is none).
func withContext(t *testing.T, c any) *html.Node {
	t.Helper()
	q := domain.Question{ID: 4, Message: "Approve deploying build 1.4.2 to production?", Asker: "Deployer", Context: c,
		Fields: []domain.Field{{Name: "approve", Kind: domain.KindBoolean, Required: true}}}
	return contextOf(t, render(t, QuestionView{Record: domain.QuestionRecord{Question: q}}))
}

func contextOf(t *testing.T, doc *html.Node) *html.Node {
	t.Helper()
	found := findAll(doc, func(n *html.Node) bool { return hasClass(n, "q-context") })
	if len(found) > 1 {
		t.Fatalf("%d q-context containers", len(found))
	}
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

func tags(n *html.Node, tag string) []*html.Node {
	return findAll(n, func(m *html.Node) bool { return m.Data == tag })
}

// deflist is a dl's terms and what each definition says, as text.
func deflist(dl *html.Node) map[string]string {
	out := map[string]string{}
	var term string
	for c := dl.FirstChild; c != nil; c = c.NextSibling {
		switch c.Data {
		case "dt":
			term = text(c)
		case "dd":
			out[term] = strings.TrimSpace(text(c))
		}
	}
	return out
}

func TestQuestionContext_TextIsSanitizedMarkdown(t *testing.T) {
	c := withContext(t, "Build 1.4.2 passed **212/212** tests.\n\n- Rollback takes about 3 minutes\n\n<img src=x onerror=alert(1)> <div data-on:click=\"alert(1)\">x</div>")
	if c == nil {
		t.Fatal("no q-context")
	}
	if s := tags(c, "strong"); len(s) != 1 || text(s[0]) != "212/212" {
		t.Errorf("**212/212** is not <strong>: %v", s)
	}
	if li := tags(c, "li"); len(li) != 1 || text(li[0]) != "Rollback takes about 3 minutes" {
		t.Errorf("the list item is not an <li>")
	}
	assertInert(t, c)
	// The context sits under the prompt, not in it.
	body := findAll(c.Parent, func(n *html.Node) bool { return hasClass(n, "body") && !hasClass(n, "q-context") })
	if len(body) != 1 || !strings.Contains(text(body[0]), "Approve deploying") || strings.Contains(text(body[0]), "212") {
		t.Error("the prompt and its context are not apart")
	}
}

// assertInert fails when anything in n carries behaviour: a data-* or on* attribute, an
// element that runs or loads something, a div other than the containers the page makes.
func assertInert(t *testing.T, n *html.Node) {
	t.Helper()
	for _, el := range findAll(n, func(*html.Node) bool { return true }) {
		for _, a := range el.Attr {
			if strings.HasPrefix(a.Key, "data-") || strings.HasPrefix(a.Key, "on") || a.Key == "style" {
				t.Errorf("<%s> carries %s=%q", el.Data, a.Key, a.Val)
			}
		}
		switch el.Data {
		case "script", "iframe", "object", "embed", "form", "input", "button":
			t.Errorf("context holds a <%s>", el.Data)
		case "img":
			if _, ok := attr(el, "onerror"); ok {
				t.Error("an <img> with onerror")
			}
		case "div":
			if !hasClass(el, "q-context") && !hasClass(el, "ctx-table-wrap") {
				t.Errorf("context holds a <div %v>", el.Attr)
			}
		}
	}
}

func TestQuestionContext_ObjectIsADefinitionList(t *testing.T) {
	c := withContext(t, map[string]any{
		"build":        "1.4.2",
		"tests":        map[string]any{"passed": 212.0, "failed": 0.0},
		"price":        1200.0,
		"ratio":        json.Number("1.25e+03"),
		"approved":     true,
		"notes":        nil,
		"regions":      []any{"eu-west", "us-east"},
		"rollback_url": "https://deploy.example/rollback",
	})
	if c == nil {
		t.Fatal("no q-context")
	}
	dls := tags(c, "dl")
	if len(dls) != 2 {
		t.Fatalf("%d <dl>, want the context's and the nested object's", len(dls))
	}
	got := deflist(dls[0])
	want := map[string]string{"Build": "1.4.2", "Price": "1200", "Ratio": "1250", "Approved": "Yes", "Notes": "—",
		"Regions": "eu-west, us-east", "Rollback URL": "https://deploy.example/rollback"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// The nested object is folded under a summary of its keys, with a dl of its own.
	details := tags(c, "details")
	if len(details) != 1 {
		t.Fatalf("%d <details>, want 1", len(details))
	}
	if _, open := attr(details[0], "open"); open {
		t.Error("the nested object is shown open")
	}
	if s := text(tags(details[0], "summary")[0]); s != "Failed, Passed" {
		t.Errorf("summary = %q", s)
	}
	if got := deflist(tags(details[0], "dl")[0]); got["Passed"] != "212" || got["Failed"] != "0" {
		t.Errorf("nested dl = %v", got)
	}
	// Keys are sorted: the same order however the context was stored.
	var terms []string
	for _, dt := range tags(dls[0], "dt") {
		if dt.Parent == dls[0] {
			terms = append(terms, text(dt))
		}
	}
	if strings.Join(terms, ",") != "Approved,Build,Notes,Price,Ratio,Regions,Rollback URL,Tests" {
		t.Errorf("terms = %v", terms)
	}
}

func TestQuestionContext_ListOfObjectsIsATable(t *testing.T) {
	venues := []any{
		map[string]any{"id": "loft", "name": "Pike Loft", "capacity": 40.0, "price": 1200.0},
		map[string]any{"id": "hall", "name": "Union Hall", "capacity": 120.0, "price": 3400.0, "contact": map[string]any{"email": "events@union.example"}},
	}
	for name, ctx := range map[string]any{"Bare": venues, "InAnObject": map[string]any{"venues": venues}} {
		t.Run(name, func(t *testing.T) {
			c := withContext(t, ctx)
			tables := tags(c, "table")
			if len(tables) != 1 {
				t.Fatalf("%d tables", len(tables))
			}
			var head []string
			for _, th := range tags(tables[0], "th") {
				if v, _ := attr(th, "scope"); v != "col" {
					t.Errorf("<th> %q has scope %q", text(th), v)
				}
				head = append(head, text(th))
			}
			// Columns: the first row's keys, sorted, then the keys later rows add.
			if strings.Join(head, ",") != "Capacity,ID,Name,Price,Contact" {
				t.Errorf("columns = %v", head)
			}
			rows := tags(tables[0], "tr")
			if len(rows) != 3 {
				t.Fatalf("%d rows, want a head and 2", len(rows))
			}
			var cells []string
			for _, td := range tags(rows[1], "td") {
				cells = append(cells, strings.TrimSpace(text(td)))
			}
			if strings.Join(cells, "|") != "40|loft|Pike Loft|1200|" {
				t.Errorf("first row = %q", cells)
			}
			// An object in a cell is folded; the table itself is open.
			d := tags(rows[2], "details")
			if len(d) != 1 || text(tags(d[0], "summary")[0]) != "Email" || deflist(tags(d[0], "dl")[0])["Email"] != "events@union.example" {
				t.Errorf("the contact cell is not folded: %v", d)
			}
			if len(tags(c, "details")) != 1 {
				t.Error("the table is folded")
			}
			wrap := tables[0].Parent
			if !hasClass(wrap, "ctx-table-wrap") {
				t.Fatal("the table has no scrolling box")
			}
			if v, _ := attr(wrap, "tabindex"); v != "0" {
				t.Error("the table's scrolling box cannot be reached by keyboard")
			}
		})
	}
}

func TestQuestionContext_ListOfValues(t *testing.T) {
	c := withContext(t, []any{"eu-west", 3.0, false, nil})
	var items []string
	for _, li := range tags(c, "li") {
		items = append(items, strings.TrimSpace(text(li)))
	}
	if strings.Join(items, "|") != "eu-west|3|No|—" {
		t.Errorf("items = %q", items)
	}
}

// What an agent gives straight (Go maps and slices, json.Number) shows as it does once read
// back from the database.
func TestQuestionContext_AgentValuesAsStored(t *testing.T) {
	type venue struct {
		Name     string `json:"name"`
		Capacity int    `json:"capacity"`
	}
	live := map[string]any{"count": json.Number("1e21"), "tags": []string{"a", "b"}, "venues": []venue{{"Pike Loft", 40}}, "by_id": map[string]int{"x": 1}}
	raw, _ := json.Marshal(live)
	var stored any
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	a, b := withContext(t, live), withContext(t, stored)
	if text(a) != text(b) {
		t.Errorf("live %q, stored %q", text(a), text(b))
	}
	for _, want := range []string{"1000000000000000000000", "a, b", "Pike Loft", "40"} {
		if !strings.Contains(text(a), want) {
			t.Errorf("context lacks %q: %s", want, text(a))
		}
	}
}

// Nothing in a context can carry behaviour: Datastar runs data-* attributes, browsers run
// on* ones. Keys and values are text.
func TestQuestionContext_Inert(t *testing.T) {
	img, div := `<img src=x onerror=alert(1)>`, `<div data-on:click="alert(1)">`
	c := withContext(t, map[string]any{
		"data-on:click": div,
		"html":          img,
		"rows":          []any{map[string]any{"data-on:load": img, `"><b onclick=x>`: div}},
		"nested":        map[string]any{"onerror": map[string]any{"data-attr:x": div}},
	})
	assertInert(t, c)
	all := text(c)
	for _, want := range []string{img, div, "Data on:click", "Data on:load"} {
		if !strings.Contains(all, want) {
			t.Errorf("context does not show %q as text: %s", want, all)
		}
	}
	if len(tags(c, "img")) != 0 || len(tags(c, "b")) != 0 {
		t.Error("a value became an element")
	}
	assertInert(t, withContext(t, []any{img, div}))
}

func TestQuestionContext_Limits(t *testing.T) {
	t.Run("Rows", func(t *testing.T) {
		var rows []any
		for i := range 500 {
			rows = append(rows, map[string]any{"n": float64(i)})
		}
		c := withContext(t, rows)
		if n := len(tags(c, "tr")); n != 201 {
			t.Errorf("%d rows, want a head and 200", n)
		}
		if !strings.Contains(text(c), "… 300 more rows not shown") {
			t.Error("the cut is not said")
		}
	})
	t.Run("Columns", func(t *testing.T) {
		row := map[string]any{}
		for i := range 60 {
			row[fmt.Sprintf("k%02d", i)] = "v"
		}
		c := withContext(t, []any{row})
		if n := len(tags(c, "th")); n != 50 {
			t.Errorf("%d columns, want 50", n)
		}
		if !strings.Contains(text(c), "10 more columns") {
			t.Error("the cut is not said")
		}
	})
	t.Run("Depth", func(t *testing.T) {
		var v any = "bottom"
		for range 10 {
			v = map[string]any{"down": v}
		}
		c := withContext(t, v)
		if n := len(tags(c, "dl")); n > humantext.ContextDepth+1 {
			t.Errorf("%d nested lists, deeper than %d", n, humantext.ContextDepth)
		}
		if !strings.Contains(text(c), `{"down":{"down"`) {
			t.Errorf("the deepest values are not shown as JSON: %s", text(c))
		}
	})
	t.Run("Budget", func(t *testing.T) {
		var rows []any
		for range 200 {
			row := map[string]any{}
			for j := range 50 {
				row[fmt.Sprintf("k%02d", j)] = []any{map[string]any{"a": 1.0, "b": 2.0}}
			}
			rows = append(rows, row)
		}
		c := withContext(t, rows)
		// The budget is checked row by row: a row may pass it, no more.
		if n := len(tags(c, "td")); n > 2*humantext.ContextBudget {
			t.Errorf("%d cells for a budget of %d values", n, humantext.ContextBudget)
		}
		if !strings.Contains(text(c), "more rows not shown") {
			t.Error("the cut is not said")
		}
	})
}

func TestQuestionContext_None(t *testing.T) {
	for _, c := range []any{nil, "", "  \n", map[string]any{}, []any{}} {
		if withContext(t, c) != nil {
			t.Errorf("context %#v shows a q-context", c)
		}
	}
}

func TestQuestionCard_ResolvedShowsContext(t *testing.T) {
	rec := domain.QuestionRecord{Question: domain.Question{ID: 9, Message: "Approve?", Context: "Build **1.4.2**",
		Fields: []domain.Field{{Name: "ok", Kind: domain.KindBoolean}}}}
	rec.Resolution = &domain.Resolution{Outcome: domain.Answered, By: "you", Values: map[string]any{"ok": true}}
	c := contextOf(t, render(t, QuestionView{Record: rec}))
	if c == nil || len(tags(c, "strong")) != 1 {
		t.Fatal("a resolved question does not show its context")
	}
}
