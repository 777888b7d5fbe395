package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello", []string{"Hello"}},
		{"Hello world", []string{"Hello ", "world"}},
		{"  lead\n\n| a | b |\n", []string{"  ", "lead\n\n", "| ", "a ", "| ", "b ", "|\n"}},
		{"héllo wörld ", []string{"héllo ", "wörld "}},
	}
	for _, tt := range tests {
		got := tokens(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("tokens(%q) do not join back", tt.in)
		}
	}
}

func TestSpeaker_StreamsWordByWord(t *testing.T) {
	rec := newRecorder(t)
	sp := speaker{ctx: t.Context(), out: rec, pace: time.Millisecond}
	start := time.Now()
	if err := sp.say("Coordinator", "one two three"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Deltas, []string{"one ", "two ", "three"}) {
		t.Errorf("deltas %q", rec.Deltas)
	}
	if d := time.Since(start); d < 2*time.Millisecond {
		t.Errorf("streamed 3 tokens in %v, want the pace between them", d)
	}
	if m := rec.messages(); len(m) != 1 || m[0].Author != "Coordinator" || m[0].Text != "one two three" {
		t.Errorf("messages %+v", m)
	}
}

func TestAgents_CancelStopsStreaming(t *testing.T) {
	for _, a := range All(Options{Pace: time.Millisecond}) {
		t.Run(a.Info().Name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec := newRecorder(t)
			rec.OnText = func(string) {
				if len(rec.Deltas) == 3 {
					cancel()
				}
			}
			in := domain.StepInput{RunID: 1, StepID: 1, Trigger: domain.TriggerMessage,
				History: []domain.Event{{Kind: domain.EventUserMessage, Text: seattle + ". Also create a pull request."}}}
			err := a.Step(ctx, in, rec)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Step returned %v, want context.Canceled", err)
			}
			if len(rec.Deltas) != 3 {
				t.Errorf("streamed %d deltas, want 3 (none after the cancel)", len(rec.Deltas))
			}
		})
	}
}

func TestAgents_CancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, a := range All(Options{}) {
		rec := newRecorder(t)
		if err := a.Step(ctx, domain.StepInput{RunID: 1, Trigger: domain.TriggerMessage}, rec); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Step returned %v, want context.Canceled", a.Info().Name, err)
		}
		if len(rec.Events) != 0 || len(rec.Deltas) != 0 {
			t.Errorf("%s reported after cancellation", a.Info().Name)
		}
	}
}

// script plays a whole conversation and returns everything it stored, as JSON.
func script(t *testing.T, a domain.Agent, message string) string {
	t.Helper()
	c := newConvo(t, a)
	c.send(message)
	for len(c.pending()) > 0 {
		q := c.only()
		switch q.Fields[0].Name {
		case "branch_name":
			c.answer(form("branch_name", "feature/x", "pr_title", "X", "base_branch", "main"))
		default:
			c.answer(form(answerFor(t, q)...))
		}
		c.resume()
	}
	b, err := json.Marshal(c.History)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAgents_Deterministic(t *testing.T) {
	tests := []struct {
		a       domain.Agent
		message string
	}{
		{NewEventPlanner(Options{}), seattle},
		{NewEventPlanner(Options{}), "Plan a party for 30 people"},
		{NewPlatformEngineer(Options{}), "create a pull request from feature/x"},
	}
	for _, tt := range tests {
		first, second := script(t, tt.a, tt.message), script(t, tt.a, tt.message)
		if first != second {
			t.Errorf("%s on %q: two runs differ", tt.a.Info().Name, tt.message)
		}
	}
}

func TestEventPlanner_ResolvesDatesAgainstMessageTime(t *testing.T) {
	c := newConvo(t, NewEventPlanner(Options{}))
	c.History = append(c.History, domain.Event{Kind: domain.EventUserMessage, Text: seattle,
		At: time.Date(2025, 10, 28, 9, 0, 0, 0, time.UTC)})
	c.Run = 1
	rec := c.stepNow(domain.TriggerMessage)
	if plan := finalPlanOf(t, rec); !strings.Contains(plan, "Friday 21 November 2025, evening") {
		t.Errorf("date not resolved:\n%s", plan)
	}
}

func TestInfo(t *testing.T) {
	want := map[string]string{"event-planner": "Event planner", "platform-engineer": "Platform engineer"}
	agents := All(Options{})
	if len(agents) != len(want) {
		t.Fatalf("All returned %d agents", len(agents))
	}
	for _, a := range agents {
		info := a.Info()
		if want[info.Name] != info.Title || !info.Builtin || !strings.Contains(info.Description, "offline") {
			t.Errorf("info %+v", info)
		}
	}
}
