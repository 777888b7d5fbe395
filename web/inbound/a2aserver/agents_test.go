package a2aserver_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/web/webtest"
)

// The agents the A2A clients of these tests talk to: the same as web's tests of the pages
// and the JSON API talk to (web/conversation_test.go, web/document_test.go).

func lastResolution(in agent.StepInput) *agent.Resolution {
	var r *agent.Resolution
	for _, ev := range in.History {
		if ev.Kind == agent.EventQuestionResolved {
			r = ev.Resolution
		}
	}
	return r
}

func intp(n int) *int           { return &n }
func floatp(f float64) *float64 { return &f }

// askerQuestion has one field of each validation family.
func askerQuestion() agent.Question {
	return agent.Question{Message: "Tell me about **it**", Fields: []agent.Field{
		{Name: "name", Label: "Project name", Kind: agent.KindText, Required: true, MinLength: intp(3), Description: "At least three letters"},
		{Name: "count", Label: "Head count", Kind: agent.KindInteger, Required: true, Min: floatp(1), Max: floatp(10)},
		{Name: "color", Kind: agent.KindSelect, Options: []agent.Option{{Value: "red", Label: "Red"}, {Value: "blue", Label: "Blue"}}},
	}}
}

// askerAgent says something, asks q, and once it is resolved says how.
func askerAgent(q func() agent.Question) *webtest.Scripted {
	return &webtest.Scripted{Name: "asker", OnStep: func(ctx context.Context, in agent.StepInput, out agent.Output) error {
		if r := lastResolution(in); r != nil {
			return out.Text(fmt.Sprintf("Outcome %s, name %v, reason %q.", r.Outcome, r.Values["name"], r.Reason))
		}
		out.Text("Let me ")
		out.Text("ask you something.")
		_, err := out.Ask(q())
		return err
	}}
}

// readerAgent replies with the first line of each document attached to the person's last message.
func readerAgent() *webtest.Scripted {
	return &webtest.Scripted{Name: "reader", OnStep: func(ctx context.Context, in agent.StepInput, out agent.Output) error {
		var msg agent.Event
		for _, ev := range in.History {
			if ev.Kind == agent.EventUserMessage {
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
	}}
}
