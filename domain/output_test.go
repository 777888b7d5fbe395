package domain

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// sinkRecord is what a StepOutput handed its sink.
type sinkRecord struct {
	live   []string
	stored []Event
	asked  []Question
}

func (s *sinkRecord) Live(msgID, author, delta string) {
	s.live = append(s.live, msgID+"|"+author+"|"+delta)
}
func (s *sinkRecord) Store(ev Event) error { s.stored = append(s.stored, ev); return nil }
func (s *sinkRecord) Await(context.Context, int64) (Resolution, error) {
	return Resolution{}, errors.New("no live questions here")
}
func (s *sinkRecord) Ask(q Question) (int64, error) {
	s.asked = append(s.asked, q)
	return int64(len(s.asked)), nil
}

func (s *sinkRecord) messages() []string {
	var out []string
	for _, ev := range s.stored {
		if ev.Kind == EventAgentMessage {
			out = append(out, ev.MessageID+"|"+ev.Text)
		}
	}
	return out
}

const form = `UserInputMetaData: {"content": "Which branch?", "metadata": {"input_fields": [{"name": "branch", "type": "text", "required": true}]}}`

func TestStepOutput(t *testing.T) {
	t.Run("TextGoesLiveAndTheMessageIsStoredWhole", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 7}, "Bot", s)
		for _, d := range []string{"Hello ", "", "wor", "ld\r\n"} {
			o.Text(d)
		}
		if want := []string{"7-1|Bot|Hello ", "7-1|Bot|wor", "7-1|Bot|ld\n"}; !slices.Equal(s.live, want) {
			t.Errorf("live = %q, want %q", s.live, want)
		}
		if len(s.stored) != 0 {
			t.Fatalf("stored %v while the message was written", s.stored)
		}
		o.EndMessage()
		o.Text("Next")
		o.EndMessage()
		if want := []string{"7-1|Hello world\n", "7-2|Next"}; !slices.Equal(s.messages(), want) {
			t.Errorf("messages = %q, want %q", s.messages(), want)
		}
	})
	t.Run("AFormOpeningTheMessageIsHeldBackAndAsked", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 1}, "Bot", s)
		for i := 0; i < len(form); i += 7 {
			o.Text(form[i:min(i+7, len(form))])
		}
		o.Text("\nThanks.")
		o.EndMessage()
		if len(s.live) != 0 {
			t.Errorf("a form went live: %q", s.live)
		}
		if len(s.asked) != 1 || s.asked[0].Message != "Which branch?" || s.asked[0].Asker != "Bot" {
			t.Fatalf("asked %+v", s.asked)
		}
		if want := []string{"1-2|Thanks."}; !slices.Equal(s.messages(), want) {
			t.Errorf("messages = %q, want the text after the form, %q", s.messages(), want)
		}
	})
	t.Run("TextBeforeAFormStaysAndTheFormDoesNot", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 1}, "Bot", s)
		o.Text("Let me ask.\n")
		o.Text(form)
		o.EndMessage()
		if want := []string{"1-1|Let me ask."}; !slices.Equal(s.messages(), want) {
			t.Errorf("messages = %q, want %q", s.messages(), want)
		}
		if len(s.asked) != 1 {
			t.Errorf("asked %d questions, want the form's", len(s.asked))
		}
	})
	t.Run("NotAFormAfterAllIsReleasedWhole", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 1}, "Bot", s)
		o.Text("User")
		o.Text("Input is what you type.")
		if want := []string{"1-1|Bot|UserInput is what you type."}; !slices.Equal(s.live, want) {
			t.Errorf("live = %q, want %q", s.live, want)
		}
	})
	t.Run("ACharacterCutInTwoGoesLiveWhole", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 1}, "Bot", s)
		e := "é" // two bytes
		o.Text("caf" + e[:1])
		o.Text(e[1:] + "!")
		if want := []string{"1-1|Bot|caf", "1-1|Bot|é!"}; !slices.Equal(s.live, want) {
			t.Errorf("live = %q, want %q", s.live, want)
		}
	})
	t.Run("PartialKeepsWhatWasWrittenHeldTextIncluded", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 3}, "Bot", s)
		o.Text("UserInputMeta")
		p, ok := o.Partial()
		if !ok || p.Text != "UserInputMeta" || !p.Interrupted || p.MessageID != "3-1" {
			t.Errorf("partial = %+v, %v", p, ok)
		}
		if _, ok := o.Partial(); ok {
			t.Error("a second Partial found a message")
		}
		o.Text("   ")
		if _, ok := o.Partial(); ok {
			t.Error("blank text makes a partial message")
		}
	})
	t.Run("DraftsTakeWhatWasWrittenSinceTheLast", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 3, RunID: 9}, "Bot", s)
		if _, ok := o.Draft(); ok {
			t.Error("a draft before any text")
		}
		o.Text("Hello ")
		o.Text("world")
		d, ok := o.Draft()
		if !ok || d.Text != "Hello world" || d.At != 0 || d.MessageID != "3-1" || d.Author != "Bot" {
			t.Errorf("draft = %+v", d)
		}
		o.Text("!")
		if d, _ := o.Draft(); d.Text != "!" || d.At != 11 {
			t.Errorf("second draft = %+v, want \"!\" at 11", d)
		}
		if _, ok := o.Draft(); ok {
			t.Error("a draft with nothing new")
		}
		o.Text(form[:20]) // a new message? no: this one goes on, and is not a form
		o.EndMessage()
		o.Text(form[:20]) // a message that may be a form is held: no draft of it
		if d, ok := o.Draft(); ok {
			t.Errorf("draft of held text: %+v", d)
		}
	})
	t.Run("ASpeakerChangeEndsTheMessage", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 1}, "Coordinator", s)
		o.Text("Start.")
		o.As("Venue specialist")
		o.Text("Venues.")
		o.EndMessage()
		var by []string
		for _, ev := range s.stored {
			by = append(by, ev.Author+": "+ev.Text)
		}
		if want := []string{"Coordinator: Start.", "Venue specialist: Venues."}; !slices.Equal(by, want) {
			t.Errorf("messages %q, want %q", by, want)
		}
	})
	t.Run("SecretsAreRefusedAndInvalidQuestionsFail", func(t *testing.T) {
		s := &sinkRecord{}
		o := NewStepOutput(StepInput{StepID: 1}, "Bot", s)
		if _, err := o.Ask(Question{Message: "Log in", Fields: []Field{{Name: "user", Kind: KindText}, {Name: "password", Kind: KindText}}}); err != nil {
			t.Fatal(err)
		}
		if q := s.asked[0]; len(q.Fields) != 1 || len(q.Refused) != 1 {
			t.Errorf("asked %+v, want the password refused", q)
		}
		if _, err := o.Ask(Question{Message: "?", Fields: []Field{{Name: "x", Kind: KindText}, {Name: "x", Kind: KindText}}}); err == nil || !strings.Contains(err.Error(), "invalid question") {
			t.Errorf("an invalid question: %v", err)
		}
	})
}
