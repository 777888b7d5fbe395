package views

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/parley-chat/parley/domain"
)

func TestTickValues(t *testing.T) {
	for _, tt := range []struct {
		max      int
		wantStep int
		want     []int
	}{
		{0, 1, []int{0, 1}},
		{1, 1, []int{0, 1}},
		{5, 1, []int{0, 1, 2, 3, 4, 5}},
		{7, 2, []int{0, 2, 4, 6, 8}},
		{10, 2, []int{0, 2, 4, 6, 8, 10}},
		{43, 10, []int{0, 10, 20, 30, 40, 50}},
		{1000, 200, []int{0, 200, 400, 600, 800, 1000}},
	} {
		if got := TickStep(tt.max); got != tt.wantStep {
			t.Errorf("TickStep(%d) = %d, want %d", tt.max, got, tt.wantStep)
		}
		if got := TickValues(tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("TickValues(%d) = %v, want %v", tt.max, got, tt.want)
		}
	}
}

func TestLabelEvery(t *testing.T) {
	for _, tt := range []struct{ n, most, want int }{
		{7, 12, 1}, {12, 12, 1}, {30, 12, 3}, {90, 12, 8}, {90, 0, 1},
	} {
		if got := LabelEvery(tt.n, tt.most); got != tt.want {
			t.Errorf("LabelEvery(%d, %d) = %d, want %d", tt.n, tt.most, got, tt.want)
		}
	}
}

var figuresFrom = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// sampleFigures are a week with questions to three agents: helper's answered in 2m30s and
// 10m, planner's in 45s, silent's never.
func sampleFigures() domain.QuestionFigures {
	at := func(day, hour int) time.Time {
		return figuresFrom.AddDate(0, 0, day-1).Add(time.Duration(hour) * time.Hour)
	}
	answered := func(name string, asked time.Time, wait time.Duration) domain.QuestionFact {
		return domain.QuestionFact{Agent: name, AskedAt: asked, Outcome: domain.Answered, ResolvedAt: asked.Add(wait)}
	}
	facts := []domain.QuestionFact{
		answered("helper", at(2, 9), 150*time.Second),
		answered("helper", at(2, 10), 10*time.Minute),
		{Agent: "helper", AskedAt: at(2, 11), Outcome: domain.Declined, ResolvedAt: at(2, 12)},
		{Agent: "planner", AskedAt: at(2, 13), Outcome: domain.Expired, ResolvedAt: at(3, 13)},
		answered("planner", at(5, 8), 45*time.Second),
		{Agent: "planner", AskedAt: at(7, 8)},
		{Agent: "silent", AskedAt: at(7, 9)},
	}
	return domain.FigureQuestions(facts, figuresFrom, figuresFrom.AddDate(0, 0, 7))
}

func TestDayChart(t *testing.T) {
	f := domain.QuestionFigures{From: figuresFrom, Days: []domain.DayFigures{
		{Day: figuresFrom},
		{Day: figuresFrom.AddDate(0, 0, 1), Counts: domain.Counts{Asked: 10, Answered: 4, Declined: 2, Expired: 1, Other: 1, Pending: 2}},
		{Day: figuresFrom.AddDate(0, 0, 2), Counts: domain.Counts{Asked: 5, Answered: 5}},
	}}
	c := DayChart(f)
	plot := c.PlotBottom - c.PlotTop
	if got := c.Ticks[len(c.Ticks)-1]; got.Label != "10" || got.Y != c.PlotTop {
		t.Errorf("top tick = %+v, want 10 at the plot top %d", got, c.PlotTop)
	}
	if len(c.Bars) != 3 {
		t.Fatalf("bars = %d, want one per day", len(c.Bars))
	}
	if n := len(c.Bars[0].Segments); n != 0 {
		t.Errorf("a day without questions has %d segments, want none", n)
	}
	height := func(b Bar) int {
		h := 0
		for _, s := range b.Segments {
			h += s.Height
		}
		return h
	}
	if got := height(c.Bars[1]); got != plot {
		t.Errorf("10 questions of 10: height %d, want the whole plot %d", got, plot)
	}
	if got := height(c.Bars[2]); got != plot/2 {
		t.Errorf("5 questions of 10: height %d, want half the plot %d", got, plot/2)
	}
	var names []string
	bottom := c.PlotBottom
	for _, s := range c.Bars[1].Segments {
		names = append(names, s.Name)
		if s.Y+s.Height != bottom {
			t.Errorf("segment %s ends at %d, want it on the one below at %d", s.Name, s.Y+s.Height, bottom)
		}
		bottom = s.Y
	}
	if want := []string{"Answered", "Declined", "Expired", "Other", "Pending"}; !slices.Equal(names, want) {
		t.Errorf("segments bottom up = %v, want %v", names, want)
	}
	if c.Bars[2].Segments[0].Height != plot/2 || len(c.Bars[2].Segments) != 1 {
		t.Errorf("an all-answered day: segments %+v, want one answered segment", c.Bars[2].Segments)
	}
}

func TestDayChart_labelsThinned(t *testing.T) {
	f := domain.QuestionFigures{}
	for i := range 90 {
		f.Days = append(f.Days, domain.DayFigures{Day: figuresFrom.AddDate(0, 0, i), Counts: domain.Counts{Asked: 1, Answered: 1}})
	}
	c := DayChart(f)
	var labels []string
	for _, b := range c.Bars {
		if b.Label != "" {
			labels = append(labels, b.Label)
		}
	}
	if len(labels) < 5 || len(labels) > dayMaxLabels {
		t.Errorf("90 days have %d labels %v, want between 5 and %d", len(labels), labels, dayMaxLabels)
	}
	if last := c.Bars[len(c.Bars)-1].Label; last != "May 29" {
		t.Errorf("last day's label = %q, want today's date May 29", last)
	}
}

func TestNewWaitChart(t *testing.T) {
	f := sampleFigures()
	c := NewWaitChart(f.Agents, func(name string) string { return strings.ToUpper(name) })
	if len(c.Rows) != 3 {
		t.Fatalf("rows = %d, want one per agent", len(c.Rows))
	}
	helper, planner, silent := c.Rows[0], c.Rows[1], c.Rows[2]
	if helper.Title != "HELPER" || helper.P90.Width != waitBarMax {
		t.Errorf("helper = %+v, want its p90 (the longest) at full width %d", helper, waitBarMax)
	}
	if want := waitBarMax / 4; helper.Median.Width != want { // 2m30s of 10m
		t.Errorf("helper's median width = %d, want %d", helper.Median.Width, want)
	}
	if helper.Median.Text != "Median 2 min 30 s" || helper.P90.Text != "P90 10 min 0 s" {
		t.Errorf("helper's values = %q, %q", helper.Median.Text, helper.P90.Text)
	}
	if planner.Median.Width < 2 || planner.Median.Width > waitBarMax/10 {
		t.Errorf("planner's 45s median is %d wide, want a short visible bar", planner.Median.Width)
	}
	if !silent.NoAnswers {
		t.Errorf("an agent without answers: %+v, want NoAnswers", silent)
	}
	if !strings.Contains(c.Desc, "HELPER: median 2 min 30 s, 90th percentile 10 min 0 s.") {
		t.Errorf("desc = %q", c.Desc)
	}
}

func renderFigures(t *testing.T, d FiguresData) *html.Node { return parse(t, Figures(d)) }

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

// chart finds the charts: the page's icons are hidden from readers, its charts are not.
func chart(n *html.Node) bool {
	hidden, _ := attr(n, "aria-hidden")
	return n.Data == "svg" && hidden != "true"
}

// cells are the texts of a table row's cells, header cells included.
func cells(tr *html.Node) []string {
	var out []string
	for _, c := range findAll(tr, func(n *html.Node) bool { return n.Data == "td" || n.Data == "th" }) {
		out = append(out, strings.TrimSpace(text(c)))
	}
	return out
}

func TestFigures(t *testing.T) {
	doc := renderFigures(t, FiguresData{Figures: sampleFigures(), Days: 7, Spans: []int{7, 30, 90},
		Titles: map[string]string{"helper": "Helper Bot"}})

	svgs := findAll(doc, chart)
	if len(svgs) != 2 {
		t.Fatalf("%d charts, want the day chart and the wait chart", len(svgs))
	}
	for _, s := range svgs {
		role, _ := attr(s, "role")
		label, _ := attr(s, "aria-label")
		if role != "img" || label == "" || len(findAll(s, tag("desc"))) != 1 {
			t.Errorf("chart role=%q aria-label=%q, want an image with a name and a description", role, label)
		}
	}
	label, _ := attr(svgs[0], "aria-label")
	if want := "Questions per day, Sun Mar 1 to Sat Mar 7: 7 questions asked, 3 answered, 1 declined, 1 expired"; label != want {
		t.Errorf("day chart label = %q, want %q", label, want)
	}

	days := findAll(svgs[0], func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "day") })
	if len(days) != 7 {
		t.Fatalf("%d day groups, want 7", len(days))
	}
	if got, want := text(findAll(days[1], tag("title"))[0]),
		"Mon Mar 2: 4 questions asked, 2 answered, 1 declined, 1 expired, 0 other, 0 pending"; got != want {
		t.Errorf("Mar 2 tooltip = %q, want %q", got, want)
	}
	var fills []string
	for _, r := range findAll(days[1], func(n *html.Node) bool { return hasClass(n, "segment") }) {
		v, _ := attr(r, "data-outcome")
		fills = append(fills, v)
	}
	if want := []string{"Answered", "Declined", "Expired"}; !slices.Equal(fills, want) {
		t.Errorf("Mar 2 segments = %v, want %v", fills, want)
	}
	if n := len(findAll(days[0], func(n *html.Node) bool { return hasClass(n, "segment") })); n != 0 {
		t.Errorf("Mar 1, without questions, has %d segments", n)
	}

	if !strings.Contains(text(svgs[1]), "Median 2 min 30 s") || !strings.Contains(text(svgs[1]), "No answered questions") {
		t.Errorf("wait chart text = %q, want durations and the agent without answers", text(svgs[1]))
	}

	tables := findAll(doc, func(n *html.Node) bool { return hasClass(n, "agent-figures") })
	if len(tables) != 1 {
		t.Fatalf("%d agent tables, want 1", len(tables))
	}
	var rows [][]string
	for _, tr := range findAll(tables[0], tag("tr")) {
		rows = append(rows, cells(tr))
	}
	want := [][]string{
		{"Agent", "Asked", "Answered", "Declined", "Expired", "Other", "Pending", "Median", "P90"},
		{"Helper Bot", "3", "2", "1", "0", "0", "0", "2 min 30 s", "10 min 0 s"},
		{"planner", "3", "1", "0", "1", "0", "1", "45 s", "45 s"},
		{"silent", "1", "0", "0", "0", "0", "1", "—", "—"},
		{"Total", "7", "3", "1", "1", "0", "2", "2 min 30 s", "10 min 0 s"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("agent table:\n got %q\nwant %q", rows, want)
	}

	dayRows := findAll(doc, func(n *html.Node) bool { return hasClass(n, "day-figures") })
	if len(dayRows) != 1 {
		t.Fatalf("%d day tables, want 1", len(dayRows))
	}
	trs := findAll(dayRows[0], tag("tr"))
	if len(trs) != 8 {
		t.Fatalf("day table has %d rows, want a header and 7 days", len(trs))
	}
	if got, want := cells(trs[2]), []string{"Mon Mar 2", "4", "2", "1", "1"}; !slices.Equal(got, want) {
		t.Errorf("Mar 2 row = %q, want %q", got, want)
	}

	current := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "aria-current"); return v == "page" })
	if len(current) != 1 || strings.TrimSpace(text(current[0])) != "7 days" {
		t.Errorf("current span = %v, want 7 days marked", current)
	}
	links := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "href"); return strings.HasPrefix(v, "/review/figures?days=") })
	if len(links) != 2 {
		t.Errorf("%d span links, want the two other spans", len(links))
	}
}

func TestFigures_empty(t *testing.T) {
	f := domain.FigureQuestions(nil, figuresFrom, figuresFrom.AddDate(0, 0, 30))
	doc := renderFigures(t, FiguresData{Figures: f, Days: 30, Spans: []int{7, 30, 90}})
	if n := len(findAll(doc, chart)); n != 0 {
		t.Errorf("%d charts for an empty span, want none", n)
	}
	if !strings.Contains(text(doc), "No questions were asked in these 30 days.") {
		t.Errorf("page text = %q, want the empty-span note", text(doc))
	}
}
