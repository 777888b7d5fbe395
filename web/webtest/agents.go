package webtest

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// The scripted agents the tests of the pages, the JSON API and the A2A server talk to.

// LastResolution is the newest resolution in the step's history, nil when none.
func LastResolution(in domain.StepInput) *domain.Resolution {
	var r *domain.Resolution
	for _, ev := range in.History {
		if ev.Kind == domain.EventQuestionResolved {
			r = ev.Resolution
		}
	}
	return r
}

// AskerQuestion has one field of each validation family.
func AskerQuestion() domain.Question {
	three, one, ten := 3, 1.0, 10.0
	return domain.Question{Message: "Tell me about **it**", Fields: []domain.Field{
		{Name: "name", Label: "Project name", Kind: domain.KindText, Required: true, MinLength: &three, Description: "At least three letters"},
		{Name: "count", Label: "Head count", Kind: domain.KindInteger, Required: true, Min: &one, Max: &ten},
		{Name: "color", Kind: domain.KindSelect, Options: []domain.Option{{Value: "red", Label: "Red"}, {Value: "blue", Label: "Blue"}}},
	}}
}

// AskerStep says something, asks q, and once it is resolved says how.
func AskerStep(q func() domain.Question) func(context.Context, domain.StepInput, domain.Output) error {
	return func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if r := LastResolution(in); r != nil {
			return out.Text(fmt.Sprintf("Outcome %s, name %v, reason %q.", r.Outcome, r.Values["name"], r.Reason))
		}
		out.Text("Let me ")
		out.Text("ask you something.")
		_, err := out.Ask(q())
		return err
	}
}

// ReaderStep replies with the first line of each document attached to the person's last
// message.
func ReaderStep(ctx context.Context, in domain.StepInput, out domain.Output) error {
	var msg domain.Event
	for _, ev := range in.History {
		if ev.Kind == domain.EventUserMessage {
			msg = ev
		}
	}
	for _, ref := range msg.Documents {
		d, err := in.Documents.Document(ctx, ref.ID)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(d.Content), "\n")
		if err := out.Text(fmt.Sprintf("%s starts with %q. ", d.Name, first)); err != nil {
			return err
		}
	}
	return out.Text("Read " + msg.Prompt())
}
