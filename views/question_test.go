package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/a-h/templ"
	"github.com/parley-chat/parley/domain"
)

func render(t *testing.T, q QuestionView) *html.Node { return parse(t, QuestionCard(q)) }

// parse renders a component and parses it as a page, as a browser would.
func parse(t *testing.T, c templ.Component) *html.Node {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func byName(doc *html.Node, name string) []*html.Node {
	return findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "name"); return v == name })
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func everyKind() domain.Question {
	one, ten := 1.0, 10.0
	return domain.Question{ID: 7, Message: "All kinds", Asker: "Tester", Fields: []domain.Field{
		{Name: "title", Kind: domain.KindText, Required: true, Default: "Hello", Description: "A short title"},
		{Name: "body", Kind: domain.KindTextarea, Default: "Line one"},
		{Name: "ratio", Kind: domain.KindNumber, Default: 2.5},
		{Name: "guests", Kind: domain.KindInteger, Required: true, Min: &one, Max: &ten, Default: 4},
		{Name: "venue", Kind: domain.KindSelect, Required: true, Default: "b", Options: []domain.Option{{Value: "a", Label: "Alpha"}, {Value: "b", Label: "Beta"}}},
		{Name: "diet", Kind: domain.KindMultiselect, Default: []string{"vegan"}, Options: []domain.Option{{Value: "vegan"}, {Value: "halal"}}},
		{Name: "now", Kind: domain.KindBoolean, Default: true},
		{Name: "day", Kind: domain.KindDate, Default: "2026-12-12"},
	}}
}

func TestQuestionCard_EveryKindLabelledAndPrefilled(t *testing.T) {
	doc := render(t, QuestionView{Record: domain.QuestionRecord{Question: everyKind()}})
	labels := map[string]bool{}
	for _, l := range findAll(doc, func(n *html.Node) bool { return n.Data == "label" }) {
		if f, ok := attr(l, "for"); ok {
			labels[f] = true
		}
	}
	for _, in := range findAll(doc, func(n *html.Node) bool { return n.Data == "input" || n.Data == "select" || n.Data == "textarea" }) {
		id, _ := attr(in, "id")
		if id == "" || !labels[id] {
			t.Errorf("<%s name=%v> has no <label for>", in.Data, in.Attr)
		}
	}
	checks := []struct {
		name, tag, key, want string
	}{
		{"title", "input", "value", "Hello"},
		{"ratio", "input", "value", "2.5"},
		{"ratio", "input", "type", "number"},
		{"guests", "input", "value", "4"},
		{"guests", "input", "max", "10"},
		{"guests", "input", "step", "1"},
		{"day", "input", "type", "date"},
		{"day", "input", "value", "2026-12-12"},
		{"now", "input", "type", "checkbox"},
		{"title", "input", "aria-describedby", "q7-title-help"},
	}
	for _, c := range checks {
		n := byName(doc, c.name)
		if len(n) == 0 || n[0].Data != c.tag {
			t.Fatalf("no <%s name=%q>", c.tag, c.name)
		}
		if got, _ := attr(n[0], c.key); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.name, c.key, got, c.want)
		}
	}
	if _, ok := attr(byName(doc, "now")[0], "checked"); !ok {
		t.Error("boolean default true is not checked")
	}
	if got := text(byName(doc, "body")[0]); got != "Line one" {
		t.Errorf("textarea = %q", got)
	}
	selected := findAll(byName(doc, "venue")[0], func(n *html.Node) bool { _, ok := attr(n, "selected"); return ok })
	if len(selected) != 1 || text(selected[0]) != "Beta" {
		t.Errorf("select default not selected: %v", selected)
	}
	diet := byName(doc, "diet")
	if _, ok := attr(diet[0], "checked"); !ok || len(diet) != 2 {
		t.Errorf("multiselect default not checked")
	}
	if _, ok := attr(diet[1], "checked"); ok {
		t.Errorf("multiselect option checked without a default")
	}
	page := text(doc)
	for _, want := range []string{"Submit", "Decline", "A short title", "(required)"} {
		if !strings.Contains(page, want) {
			t.Errorf("form lacks %q", want)
		}
	}
	if strings.Contains(page, "Cancel") {
		t.Error("Cancel shown though the agent does not allow it")
	}
}

func TestQuestionCard_ErrorsKeepTypedValues(t *testing.T) {
	q := QuestionView{
		Record: domain.QuestionRecord{Question: everyKind()},
		Values: map[string][]string{"title": {"typed <b>"}, "guests": {"99"}},
		Errors: domain.FieldErrors{"guests": "Must be between 1 and 10."},
	}
	doc := render(t, q)
	if v, _ := attr(byName(doc, "title")[0], "value"); v != "typed <b>" {
		t.Errorf("typed value lost: %q", v)
	}
	if v, _ := attr(byName(doc, "guests")[0], "aria-invalid"); v != "true" {
		t.Error("invalid field not marked aria-invalid")
	}
	if !strings.Contains(text(doc), "Must be between 1 and 10.") {
		t.Error("field error not shown")
	}
	// Typed values replace defaults: a multiselect left empty stays empty.
	if _, ok := attr(byName(doc, "diet")[0], "checked"); ok {
		t.Error("default came back over what was submitted")
	}
}

func TestQuestionCard_Resolved(t *testing.T) {
	rec := domain.QuestionRecord{Question: everyKind()}
	rec.Resolution = &domain.Resolution{Outcome: domain.Answered, By: "you", Values: map[string]any{"venue": "a", "diet": []any{"vegan", "halal"}, "now": false}}
	doc := render(t, QuestionView{Record: rec})
	page := text(doc)
	for _, want := range []string{"Answered", "Alpha", "vegan, halal", "No", "by you"} {
		if !strings.Contains(page, want) {
			t.Errorf("resolved card lacks %q: %s", want, page)
		}
	}
	if len(findAll(doc, func(n *html.Node) bool { return n.Data == "form" })) != 0 {
		t.Error("a resolved question still shows its form")
	}
}

// A date field's limits reach the browser's input as min and max, Today as the server's date.
func TestQuestionCard_DateLimits(t *testing.T) {
	q := domain.Question{ID: 3, Message: "When?", Fields: []domain.Field{
		{Name: "from", Kind: domain.KindDate, MinDate: domain.Today},
		{Name: "in_march", Kind: domain.KindDate, MinDate: "2026-03-01", MaxDate: "2026-03-31"},
		{Name: "any", Kind: domain.KindDate},
	}}
	doc := render(t, QuestionView{Record: domain.QuestionRecord{Question: q}})
	today := time.Now().Format(time.DateOnly)
	checks := []struct{ name, key, want string }{
		{"from", "min", today},
		{"from", "max", ""},
		{"in_march", "min", "2026-03-01"},
		{"in_march", "max", "2026-03-31"},
		{"any", "min", ""},
	}
	for _, c := range checks {
		if got, _ := attr(byName(doc, c.name)[0], c.key); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.name, c.key, got, c.want)
		}
	}
}
