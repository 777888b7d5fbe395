package openai

import (
	"strings"

	"github.com/parley-chat/parley/domain"
)

// rebuild turns the conversation's event log into the messages the model is sent (without
// the system prompt), so that every step, after a resume or a restart alike, continues
// exactly where the last one stopped:
//
//   - a person's message is a user message: its prompt (the intent intake made of it, and the
//     AVAILABLE_DOCUMENTS listing of its documents; see domain.Event.Prompt);
//   - a finished agent message is an assistant message; a partial one (cut off by a fault or
//     a shutdown, see partial) is left out, so that a Retry asks the model afresh;
//   - a checkpoint of this back end is the assistant's tool-call turn, followed at once by one
//     tool message per call, in call order, made from the resolution of the question asked
//     under the call id, or the result the agent wrote itself (a document it read, arguments
//     it could not use);
//   - a question without a Key was a form written as text (UserInputMetaData or a structured
//     response): it is the assistant message in the UserInputMetaData format, and its
//     resolution a user message with the answers.
func rebuild(history []domain.Event) []message {
	questions := map[int64]*domain.Question{}
	resolutions := map[int64]*domain.Resolution{}
	for _, ev := range history {
		switch {
		case ev.Kind == domain.EventQuestionAsked && ev.Question != nil:
			questions[ev.Question.ID] = ev.Question
		case ev.Kind == domain.EventQuestionResolved && ev.Resolution != nil:
			resolutions[ev.Resolution.QuestionID] = ev.Resolution
		}
	}
	toolQuestions := map[int64]bool{}
	var out []message
	for i, ev := range history {
		switch ev.Kind {
		case domain.EventUserMessage:
			// Two person messages in a row (a new message after a fault) are one turn: some
			// chat templates reject a user message after a user message.
			if n := len(out); n > 0 && out[n-1].Role == roleUser {
				out[n-1].Content += "\n\n" + ev.Prompt()
				continue
			}
			out = append(out, message{Role: roleUser, Content: ev.Prompt()})
		case domain.EventAgentMessage:
			if !partial(history, i) && strings.TrimSpace(ev.Text) != "" {
				out = append(out, message{Role: roleAssistant, Content: ev.Text})
			}
		case domain.EventCheckpoint:
			cp, ok := readCheckpoint(ev.Checkpoint)
			if !ok {
				continue
			}
			// The turn's text was streamed as an agent message just before: it is part of
			// the tool-call turn now, not a message of its own.
			if n := len(out); n > 0 && out[n-1].Role == roleAssistant && len(out[n-1].Calls) == 0 &&
				strings.TrimSpace(out[n-1].Content) == strings.TrimSpace(cp.Content) {
				out = out[:n-1]
			}
			out = append(out, cp.assistantTurn())
			for _, c := range cp.Calls {
				content, ok := cp.Results[c.ID]
				if !ok {
					content, ok = calledAfter(history, i, c.ID)
				}
				if !ok {
					q := askedAfter(history, i, c.ID, toolQuestions)
					var res *domain.Resolution
					if q != nil {
						toolQuestions[q.ID] = true
						res = resolutions[q.ID]
					}
					content = domain.ToolResult(q, res)
				}
				out = append(out, message{Role: roleTool, Content: content, CallID: c.ID})
			}
		case domain.EventQuestionAsked:
			if q := ev.Question; q != nil && q.Key == "" && !toolQuestions[q.ID] {
				out = append(out, message{Role: roleAssistant, Content: domain.FormatUserInputMetaData(*q)})
			}
		case domain.EventQuestionResolved:
			if r := ev.Resolution; r != nil {
				if q := questions[r.QuestionID]; q != nil && q.Key == "" {
					out = append(out, message{Role: roleUser, Content: formAnswer(*q, r)})
				}
			}
		}
	}
	return out
}

// calledAfter finds what the model is told of its call id of the checkpoint at index i,
// when it was a call of a tool server: the call as it stands at the end of history. The
// calls of a checkpoint are recorded before the next checkpoint, so the search stops there.
func calledAfter(history []domain.Event, i int, id string) (string, bool) {
	var found *domain.ToolCall
	for _, ev := range history[i+1:] {
		if ev.Kind == domain.EventCheckpoint {
			if _, ok := readCheckpoint(ev.Checkpoint); ok {
				break
			}
		}
		if ev.Kind == domain.EventToolCall && ev.ToolCall != nil && ev.ToolCall.ID == id {
			found = ev.ToolCall
		}
	}
	if found == nil {
		return "", false
	}
	return toolCallResult(*found), true
}

// askedAfter finds the first question asked after index i under key that no earlier tool
// call claimed; nil when the step stopped before asking it.
func askedAfter(history []domain.Event, i int, key string, claimed map[int64]bool) *domain.Question {
	for _, ev := range history[i+1:] {
		if ev.Kind == domain.EventQuestionAsked && ev.Question != nil && ev.Question.Key == key && !claimed[ev.Question.ID] {
			return ev.Question
		}
	}
	return nil
}

// partial reports whether the agent message at i was cut off: marked interrupted, or
// ended by the agent right before its step failed (the text of a fault is kept for the
// person, but the model never sees half a reply of its own).
func partial(history []domain.Event, i int) bool {
	if history[i].Interrupted {
		return true
	}
	for _, ev := range history[i+1:] {
		switch ev.Kind {
		case domain.EventRunState:
			return ev.State == domain.StateFailed || ev.State == domain.StateInterrupted
		}
		return false
	}
	return false
}
