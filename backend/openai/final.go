package openai

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/parley-chat/parley/domain"
)

// structured is the structured final response (seeds/001), loosely typed.
type structured struct {
	IsTaskComplete   any             `json:"is_task_complete"`
	RequireUserInput any             `json:"require_user_input"`
	Content          any             `json:"content"`
	Metadata         json.RawMessage `json:"metadata"`
}

// parseStructured reads a reply that is a structured response: one JSON object, bare or
// in a ``` fence, with is_task_complete or require_user_input and a string content (or
// none, when it only asks). Any
// other reply (broken JSON, JSON the person asked for, text around the object) is not.
func parseStructured(text string) (structured, bool) {
	body, ok := unfence(strings.TrimSpace(text))
	if !ok || !strings.HasPrefix(body, "{") {
		return structured{}, false
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var keys map[string]json.RawMessage
	if err := dec.Decode(&keys); err != nil || strings.TrimSpace(body[dec.InputOffset():]) != "" {
		return structured{}, false
	}
	var s structured
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return structured{}, false
	}
	_, hasComplete := keys["is_task_complete"]
	_, hasRequire := keys["require_user_input"]
	if _, isString := s.Content.(string); !isString && s.Content != nil || !hasComplete && !hasRequire {
		return structured{}, false
	}
	return s, true
}

// unfence returns what is inside a ``` fence (with an optional language tag) that spans
// the whole text, or the text itself when it is not fenced.
func unfence(text string) (string, bool) {
	if !strings.HasPrefix(text, "```") {
		return text, true
	}
	rest := strings.TrimLeftFunc(text[3:], func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
	if !strings.HasSuffix(rest, "```") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimSuffix(rest, "```")), true
}

// content is the text to show.
func (s structured) content() string {
	c, _ := s.Content.(string)
	return strings.TrimSpace(c)
}

// question is the form the response asks for, read as ParseUserInputMetaData reads a
// UserInputMetaData message; ok is false when it asks for nothing (or nothing readable).
func (s structured) question() (domain.Question, bool) {
	if s.RequireUserInput == nil {
		return domain.Question{}, false
	}
	// The parser reads require_user_input as loosely as the rest ("yes", "true", 1).
	doc := map[string]any{"require_user_input": s.RequireUserInput, "content": s.content(), "metadata": s.Metadata}
	b, err := json.Marshal(doc)
	if err != nil {
		return domain.Question{}, false
	}
	return domain.ParseUserInputMetaData(domain.UserInputMetaDataPrefix + " " + string(b))
}

// finish shows a final reply. A streamed one is done; a held one is shown as the content of
// its structured response, or asked as its form, or, when it is not a structured
// response, shown as it is.
func (a *Agent) finish(r reply, out domain.Output) error {
	if !r.held {
		return out.EndMessage()
	}
	text := r.content
	if s, ok := parseStructured(r.content); ok {
		if q, ok := s.question(); ok && a.cfg.AllowQuestions {
			q.Asker = a.info.Title
			_, err := out.Ask(q)
			return err
		}
		if c := s.content(); c != "" {
			text = c
		}
	}
	if err := out.Text(text); err != nil {
		return err
	}
	return out.EndMessage()
}
