package builtin

import (
	"github.com/parley-chat/parley/domain"
)

// lastCheckpointAt is the index of the newest checkpoint in history, -1 when there is none.
func lastCheckpointAt(history []domain.Event) int {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Kind == domain.EventCheckpoint {
			return i
		}
	}
	return -1
}

// userMessagesAfter returns the person's messages after index i, oldest first.
func userMessagesAfter(history []domain.Event, i int) []domain.Event {
	var out []domain.Event
	for _, ev := range history[i+1:] {
		if ev.Kind == domain.EventUserMessage {
			out = append(out, ev)
		}
	}
	return out
}

// messageText is a person's message as the built-in agents read it: the intent intake made
// of it, or the text as written. They read documents themselves, so the AVAILABLE_DOCUMENTS
// listing of Event.Prompt is left out.
func messageText(ev domain.Event) string {
	if ev.Intent != "" {
		return ev.Intent
	}
	return ev.Text
}

// questionsAfter returns the questions asked after index i, oldest first.
func questionsAfter(history []domain.Event, i int) []domain.Question {
	var out []domain.Question
	for _, ev := range history[i+1:] {
		if ev.Kind == domain.EventQuestionAsked && ev.Question != nil {
			out = append(out, *ev.Question)
		}
	}
	return out
}

// askedWithKey finds the newest question asked under key.
func askedWithKey(history []domain.Event, key string) (domain.Question, bool) {
	for i := len(history) - 1; i >= 0; i-- {
		ev := history[i]
		if ev.Kind == domain.EventQuestionAsked && ev.Question != nil && ev.Question.Key == key {
			return *ev.Question, true
		}
	}
	return domain.Question{}, false
}

// resolutionOf finds how the question with id was resolved, if it was.
func resolutionOf(history []domain.Event, id int64) (domain.Resolution, bool) {
	for _, ev := range history {
		if ev.Kind == domain.EventQuestionResolved && ev.Resolution != nil && ev.Resolution.QuestionID == id {
			return *ev.Resolution, true
		}
	}
	return domain.Resolution{}, false
}

// textValue reads a string answer.
func textValue(values map[string]any, name string) string {
	s, _ := values[name].(string)
	return s
}

// numberValue reads a numeric answer whatever its Go type; ok is false when there is none.
func numberValue(values map[string]any, name string) (float64, bool) {
	switch v := values[name].(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}

// listValue reads a multiselect answer.
func listValue(values map[string]any, name string) []string {
	switch v := values[name].(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, item := range v {
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if v != "" {
			return []string{v}
		}
	}
	return nil
}

// boolValue reads a boolean answer.
func boolValue(values map[string]any, name string) bool {
	b, _ := values[name].(bool)
	return b
}
