package views

import (
	"net/url"

	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/humantext"
)

// FiguresData is what the staff figures page shows: the question figures of the last Days
// days, the spans (in days) it offers, and the agents' titles by name.
type FiguresData struct {
	Figures domain.QuestionFigures
	Days    int
	Spans   []int
	Titles  map[string]string
	// Agent is the one agent the figures are of ("" for all), or Inbound the agents outside
	// Parley that ask over its MCP server; Agents are Parley's agents with questions in the
	// span, to choose from, and HasInbound says agents over MCP asked some too.
	Agent      string
	Inbound    bool
	Agents     []string
	HasInbound bool
	// Feedback are the figures of what people thought of replies and questions in the span.
	Feedback domain.FeedbackFigures
}

// figuresURL is the figures page for a span and an agent ("" for all), or for the agents
// over MCP (inbound).
func figuresURL(days int, agentName string, inbound bool) templ.SafeURL {
	u := fmt.Sprintf("/review/figures?days=%d", days)
	switch {
	case inbound:
		u += "&kind=inbound"
	case agentName != "":
		u += "&agent=" + url.QueryEscape(agentName)
	}
	return templ.SafeURL(u)
}

// choices counts the sources of questions to choose from.
func (d FiguresData) choices() int {
	n := len(d.Agents)
	if d.HasInbound {
		n++
	}
	return n
}

// title is an agent's display title; the name itself for an agent no longer configured.
func (d FiguresData) title(name string) string {
	if t, ok := d.Titles[name]; ok && t != "" {
		return t
	}
	return name
}

// BarChart is the stacked bar chart of questions per day, laid out in SVG user units so
// that the template only prints numbers.
type BarChart struct {
	Width, Height int
	// The plot area: the axes are drawn along its left and bottom edges.
	PlotLeft, PlotRight, PlotTop, PlotBottom int
	Bars                                     []Bar
	Ticks                                    []Tick
	Legend                                   []LegendItem
	// Label is the chart's accessible name, Desc its longer description.
	Label, Desc string
}

// Bar is one day of a BarChart: its stacked segments, a hover area as wide as its slot
// with the day's numbers as a tooltip (Title), and its date on the x axis (Label, empty
// when the label is left out so that labels don't collide).
type Bar struct {
	SlotX, SlotWidth int
	LabelX           int
	Label, Title     string
	Segments         []Segment
}

// Segment is one outcome's part of a Bar, bottom to top: answered, declined, expired,
// other, pending. Days and outcomes without questions have none.
type Segment struct {
	X, Y, Width, Height int
	Fill, Name          string
}

// Tick is a value on a chart's y axis and where its line is drawn.
type Tick struct {
	Y     int
	Label string
}

// LegendItem is one colour of a chart's legend.
type LegendItem struct {
	X          int
	Fill, Name string
}

// Outcome colours, shared by the legend and the bars.
const (
	fillAnswered = "#12b76a"
	fillDeclined = "#f79009"
	fillExpired  = "#d92d20"
	fillOther    = "#98a2b3"
	fillPending  = "#84adff"
	fillMedian   = "#3557d4"
	fillP90      = "#a4bcfd"
)

// Day chart geometry.
const (
	dayPlotLeft   = 44
	dayPlotTop    = 28
	dayPlotHeight = 180
	dayPlotWidth  = 640 // the target: the slot width is rounded down to whole units
	dayLabelWidth = 44  // room a "Jan 02" label needs
	dayMaxLabels  = 12
)

// DayChart lays out the stacked bar chart of figures' days; the y axis runs from 0 to the
// first round tick at or above the busiest day.
func DayChart(f domain.QuestionFigures) BarChart {
	days := make([]time.Time, len(f.Days))
	for i, d := range f.Days {
		days[i] = d.Day
	}
	c := stackedChart(days, func(i int) []dayPart { return dayParts(f.Days[i]) }, func(i int) string { return dayTitle(f.Days[i]) },
		dayParts(domain.DayFigures{}))
	c.Label, c.Desc = dayChartText(f)
	return c
}

// stackedChart lays out a stacked bar chart of days, each day's parts stacked bottom
// first, with its tooltip title and a legend of the parts.
func stackedChart(days []time.Time, parts func(i int) []dayPart, title func(i int) string, legend []dayPart) BarChart {
	n := max(len(days), 1)
	slot := max(dayPlotWidth/n, 4)
	busiest := 0
	for i := range days {
		sum := 0
		for _, p := range parts(i) {
			sum += p.count
		}
		busiest = max(busiest, sum)
	}
	ticks := TickValues(busiest)
	top := ticks[len(ticks)-1]
	c := BarChart{
		PlotLeft: dayPlotLeft, PlotRight: dayPlotLeft + n*slot,
		PlotTop: dayPlotTop, PlotBottom: dayPlotTop + dayPlotHeight,
	}
	c.Width, c.Height = c.PlotRight+24, c.PlotBottom+26 // room for half of the last label
	for _, v := range ticks {
		c.Ticks = append(c.Ticks, Tick{Y: c.PlotBottom - scale(v, top, dayPlotHeight), Label: strconv.Itoa(v)})
	}
	for i, p := range legend {
		c.Legend = append(c.Legend, LegendItem{X: dayPlotLeft + i*100, Fill: p.fill, Name: p.name})
	}
	every := LabelEvery(len(days), min(dayMaxLabels, max(1, n*slot/dayLabelWidth)))
	barWidth := max(slot*3/4, 2)
	for i, day := range days {
		b := Bar{SlotX: dayPlotLeft + i*slot, SlotWidth: slot, LabelX: dayPlotLeft + i*slot + slot/2, Title: title(i)}
		if (len(days)-1-i)%every == 0 { // the last day, today, always has its label
			b.Label = day.Format("Jan 2")
		}
		x := b.SlotX + (slot-barWidth)/2
		below := 0 // counted in the segments drawn so far
		for _, p := range parts(i) {
			if p.count == 0 {
				continue
			}
			y0 := c.PlotBottom - scale(below, top, dayPlotHeight)
			below += p.count
			y1 := c.PlotBottom - scale(below, top, dayPlotHeight)
			b.Segments = append(b.Segments, Segment{X: x, Y: y1, Width: barWidth, Height: y0 - y1, Fill: p.fill, Name: p.name})
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// dayPart is a day's count of one outcome, with the outcome's name and colour.
type dayPart struct {
	name, fill string
	count      int
}

// dayParts are a day's questions by outcome, in stacking order (bottom first).
func dayParts(d domain.DayFigures) []dayPart {
	return []dayPart{{"Answered", fillAnswered, d.Answered}, {"Declined", fillDeclined, d.Declined},
		{"Expired", fillExpired, d.Expired}, {"Other", fillOther, d.Other}, {"Pending", fillPending, d.Pending}}
}

// scale maps v of [0, top] onto [0, length], rounded: cumulative values keep stacked
// segments flush, with no gaps or overlaps from rounding each segment on its own.
func scale(v, top, length int) int {
	if top <= 0 {
		return 0
	}
	return (v*length + top/2) / top
}

// TickStep is the round step (1, 2 or 5 times a power of ten) that covers max in at most
// five steps: counts are whole, so the step is never below 1.
func TickStep(max int) int {
	for pow := 1; ; pow *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*pow*5 >= max {
				return m * pow
			}
		}
	}
}

// TickValues are the y axis ticks for a busiest value of max: 0, then steps of TickStep up
// to the first at or above max (and at least one step, so an empty axis still has a scale).
func TickValues(max int) []int {
	step := TickStep(max)
	ticks := []int{0}
	for v := step; ; v += step {
		ticks = append(ticks, v)
		if v >= max {
			return ticks
		}
	}
}

// LabelEvery is how many days apart the x axis labels of n days are, for at most most labels.
func LabelEvery(n, most int) int {
	if most <= 0 || n <= most {
		return 1
	}
	return (n + most - 1) / most
}

// dayTitle is a day's tooltip: its date and every count.
func dayTitle(d domain.DayFigures) string {
	return fmt.Sprintf("%s: %s asked, %d answered, %d declined, %d expired, %d other, %d pending",
		dayName(d.Day), humantext.Plural(d.Asked, "question"), d.Answered, d.Declined, d.Expired, d.Other, d.Pending)
}

func dayName(t time.Time) string { return t.UTC().Format("Mon Jan 2") }

// dayChartText is the day chart's accessible name and description.
func dayChartText(f domain.QuestionFigures) (label, desc string) {
	t := f.Total
	span := "no days"
	if len(f.Days) > 0 {
		span = dayName(f.Days[0].Day) + " to " + dayName(f.Days[len(f.Days)-1].Day)
	}
	label = fmt.Sprintf("Questions per day, %s: %s asked, %d answered, %d declined, %d expired",
		span, humantext.Plural(t.Asked, "question"), t.Answered, t.Declined, t.Expired)
	var busiest domain.DayFigures
	for _, d := range f.Days {
		if d.Asked > busiest.Asked {
			busiest = d
		}
	}
	desc = fmt.Sprintf("Stacked bars, one per day (UTC), split into answered, declined, expired, other "+
		"(cancelled or superseded) and pending questions. In all %d other and %d pending.", t.Other, t.Pending)
	if busiest.Asked > 0 {
		desc += fmt.Sprintf(" The busiest day was %s with %s.", dayName(busiest.Day), humantext.Plural(busiest.Asked, "question"))
	}
	return label, desc
}

// answerTime is one of an agent's answer times (median or p90) for a table or a chart;
// a dash when none of its questions was answered, as there is no time to show.
func answerTime(a domain.AgentFigures, d time.Duration) string {
	if a.Answered == 0 {
		return "—"
	}
	return Waited(d)
}

// WaitChart is the horizontal bar chart of how long people took to answer each agent's
// questions: a median and a p90 bar per agent, scaled to the longest p90.
type WaitChart struct {
	Width, Height int
	Rows          []WaitRow
	// Label is the chart's accessible name, Desc its longer description.
	Label, Desc string
}

// WaitRow is one agent of a WaitChart: its title above its two bars, or, when none of its
// questions was answered, a note instead (NoAnswers).
type WaitRow struct {
	TitleY      int
	Title       string
	NoAnswers   bool
	Median, P90 WaitBar
}

// WaitBar is one answer time of a WaitRow, with its value printed after the bar.
type WaitBar struct {
	Y, Width, Height int
	TextX, TextY     int
	Text, Fill       string
}

// Wait chart geometry: a row is a title line and two bars.
const (
	waitWidth    = 640
	waitBarMax   = 480 // leaves room for the longest value after the longest bar
	waitBarHigh  = 14
	waitRow      = 62
	waitTitleGap = 16
)

// NewWaitChart lays out the answer times of agents, in their order; title gives an
// agent's display title from its name.
func NewWaitChart(agents []domain.AgentFigures, title func(string) string) WaitChart {
	longest := time.Duration(0)
	for _, a := range agents {
		if a.Answered > 0 {
			longest = max(longest, a.P90)
		}
	}
	c := WaitChart{Width: waitWidth, Height: len(agents)*waitRow + 4,
		Label: "Time to answer per agent: median and 90th percentile"}
	var desc []string
	for i, a := range agents {
		y := i * waitRow
		r := WaitRow{TitleY: y + 14, Title: title(a.Agent), NoAnswers: a.Answered == 0}
		if r.NoAnswers {
			desc = append(desc, r.Title+": no answered questions.")
		} else {
			r.Median = newWaitBar("Median", a.Median, longest, y+waitTitleGap+4, fillMedian)
			r.P90 = newWaitBar("P90", a.P90, longest, y+waitTitleGap+6+waitBarHigh, fillP90)
			desc = append(desc, fmt.Sprintf("%s: median %s, 90th percentile %s.", r.Title, Waited(a.Median), Waited(a.P90)))
		}
		c.Rows = append(c.Rows, r)
	}
	c.Desc = strings.Join(desc, " ")
	return c
}

// newWaitBar is a bar of length d at the scale where longest fills waitBarMax; a time that
// rounds to nothing still shows a sliver, so that every answered agent has visible bars.
func newWaitBar(name string, d, longest time.Duration, y int, fill string) WaitBar {
	w := 0
	if longest > 0 {
		w = int(math.Round(float64(d) / float64(longest) * waitBarMax))
	}
	w = max(w, 2)
	return WaitBar{Y: y, Width: w, Height: waitBarHigh, TextX: w + 6, TextY: y + waitBarHigh - 3,
		Text: name + " " + Waited(d), Fill: fill}
}

// FeedbackChart lays out the opinions given each day, stacked: good and bad replies, useful
// and unneeded questions.
func FeedbackChart(f domain.FeedbackFigures) BarChart {
	days := make([]time.Time, len(f.Days))
	for i, d := range f.Days {
		days[i] = d.Day
	}
	c := stackedChart(days, func(i int) []dayPart { return ratingParts(f.Days[i].RatingCounts) }, func(i int) string {
		d := f.Days[i]
		return fmt.Sprintf("%s: %d good and %d bad replies, %d useful and %d unneeded questions", dayName(d.Day), d.Good, d.Bad, d.Useful, d.Unneeded)
	}, ratingParts(domain.RatingCounts{}))
	t := f.Total
	c.Label = "Opinions per day"
	c.Desc = fmt.Sprintf("%d replies rated (%s good, %s bad), %d questions rated (%s unneeded).",
		t.Replies(), Share(t.Good, t.Replies()), Share(t.Bad, t.Replies()), t.Questions(), Share(t.Unneeded, t.Questions()))
	return c
}

// ratingParts are a day's opinions, in stacking order (bottom first).
func ratingParts(c domain.RatingCounts) []dayPart {
	return []dayPart{{"Good reply", fillAnswered, c.Good}, {"Bad reply", fillExpired, c.Bad},
		{"Useful question", fillPending, c.Useful}, {"Unneeded question", fillDeclined, c.Unneeded}}
}

// Share is n of all as a whole percentage ("–" of none).
func Share(n, all int) string {
	if all == 0 {
		return "–"
	}
	return fmt.Sprintf("%d%%", (n*100+all/2)/all)
}

// toReview is the median time from a bad opinion to its conversation's review ("–" for none).
func toReview(a domain.FeedbackAgent) string {
	if a.Reviewed == 0 {
		return "–"
	}
	return Took(a.ToReview)
}
