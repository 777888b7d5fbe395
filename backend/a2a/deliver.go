package a2a

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// deliver sends the resolution of the newest question back into its task.
func (s *session) deliver(ctx context.Context, q *domain.Question, res *domain.Resolution) error {
	s.onAccept = func() { s.cp.Delivered = q.ID }
	switch res.Outcome {
	case domain.Cancelled:
		return s.cancel(ctx, q)
	case domain.Answered:
		parts, err := s.answerParts(ctx, *q, res)
		if err != nil {
			return err
		}
		return s.send(ctx, s.cp.live(), parts...)
	}
	return s.send(ctx, s.cp.live(), declineParts(res)...)
}

// answerParts is an answer as the agent gets it: a short text for agents that read only
// text, a DataPart with the typed values (plus the outcome) for those that read data, and a
// FilePart with the bytes of each file given as an answer.
func (s *session) answerParts(ctx context.Context, q domain.Question, res *domain.Resolution) ([]sdk.Part, error) {
	values := res.Values
	if values == nil {
		values = map[string]any{}
	}
	var b strings.Builder
	b.WriteString("Here are my answers:")
	var names []string
	seen := map[string]bool{}
	for _, f := range q.Fields {
		if _, ok := values[f.Name]; ok {
			seen[f.Name] = true
			names = append(names, f.Name)
		}
	}
	var rest []string
	for k := range values {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	var files []sdk.Part
	budget := s.a.cfg.MaxDocumentBytes
	for _, k := range append(names, rest...) {
		ref, isDoc := domain.AnswerDocument(values[k])
		if !isDoc {
			b.WriteString("\n- " + k + ": " + valueText(values[k]))
			continue
		}
		b.WriteString(fmt.Sprintf("\n- %s: the file %s (%s, %s)", k, ref.Name, ref.MimeType, domain.ByteSize(ref.Size)))
		note, err := s.attach(ctx, ref, &budget, &files)
		if err != nil {
			return nil, err
		}
		if note == "" {
			note = ", attached as a file part"
		}
		b.WriteString(note)
	}
	data := map[string]any{"outcome": string(domain.Answered), "values": values}
	if note := q.DeclineReason(); note != "" {
		b.WriteString("\n\n" + note)
		data["note"] = note
	}
	return append([]sdk.Part{sdk.TextPart{Text: b.String()}, sdk.DataPart{Data: data}}, files...), nil
}

// valueText writes one typed value for the text rendering of an answer.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "(empty)"
	case string:
		if x == "" {
			return "(empty)"
		}
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = valueText(e)
		}
		return strings.Join(parts, ", ")
	case []string:
		return strings.Join(x, ", ")
	}
	return fmt.Sprint(v)
}

// declineParts tells the agent the person declined (or let the question expire).
func declineParts(res *domain.Resolution) []sdk.Part {
	text := "The person declined"
	if res.Outcome == domain.Expired {
		text = "The person did not answer in time"
	}
	if res.Reason != "" {
		text += ": " + res.Reason
	} else {
		text += "."
	}
	data := map[string]any{"outcome": string(res.Outcome)}
	if res.Reason != "" {
		data["reason"] = res.Reason
	}
	return []sdk.Part{sdk.TextPart{Text: text}, sdk.DataPart{Data: data}}
}

// cancel stops the remote task with tasks/cancel. An agent that cannot cancel is told in a
// message instead that the person stopped.
func (s *session) cancel(ctx context.Context, q *domain.Question) error {
	if !s.cp.live() {
		s.cp.Delivered = q.ID
		if err := s.save(); err != nil {
			return err
		}
		if s.cp.TaskID == "" {
			// The agent asked in a message, not a task: there is nothing to cancel there.
			return s.w.final("Stopped, as you asked. Send a message when you want to go on.")
		}
		return s.w.final("The task had already ended.")
	}
	var t *sdk.Task
	err := retryBusy(ctx, func() error {
		cctx, w := withWatch(ctx)
		cctx, stop := context.WithTimeout(cctx, callTimeout)
		defer stop()
		var err error
		if t, err = s.c.client.CancelTask(cctx, &sdk.TaskIDParams{ID: s.cp.TaskID}); err != nil {
			return &callError{method: "tasks/cancel", w: w, err: err}
		}
		return nil
	})
	if err != nil {
		var ce *callError
		if errors.As(err, &ce) {
			switch ce.rpcCode() {
			case codeTaskNotCancelable, codeUnsupported, -32601:
				return s.send(ctx, true,
					sdk.TextPart{Text: "The person cancelled the request and does not want to go on."},
					sdk.DataPart{Data: map[string]any{"outcome": string(domain.Cancelled)}})
			}
		}
		return err
	}
	s.cp.Delivered = q.ID
	s.done = true
	if t != nil {
		s.adopt(t.ID, t.ContextID)
		if err := s.track(t.Status.State); err != nil {
			return err
		}
		if t.Status.State == sdk.TaskStateCanceled {
			return s.w.final("You cancelled the task.")
		}
	}
	if err := s.save(); err != nil {
		return err
	}
	return s.w.final("Parley asked the agent to cancel the task.")
}
