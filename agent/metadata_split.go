package agent

import (
	"encoding/json"
	"strings"
	"unicode"
)

// SplitUserInputMetaData finds a UserInputMetaData form in an agent message: at its start,
// or at the start of a later line after some ordinary text. It returns the form, the text
// before it and the text after its JSON, so that nothing the agent wrote is lost. ok is false
// when the message holds no readable form; the caller then shows the whole text.
func SplitUserInputMetaData(text string) (q Question, before, after string, ok bool) {
	at := prefixIndex(text)
	if at < 0 {
		return Question{}, "", "", false
	}
	before = strings.TrimSpace(text[:at])
	body := strings.TrimLeftFunc(text[at+len(UserInputMetaDataPrefix):], unicode.IsSpace)
	fenced := strings.HasPrefix(body, "```")
	body = stripFence(body)
	dec := json.NewDecoder(strings.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return Question{}, "", "", false
	}
	q, ok = ParseUserInputMetaData(UserInputMetaDataPrefix + " " + string(raw))
	if !ok {
		return Question{}, "", "", false
	}
	after = strings.TrimSpace(body[dec.InputOffset():])
	if fenced {
		after = strings.TrimSpace(strings.TrimPrefix(after, "```"))
	}
	return q, before, after, true
}

// prefixIndex is where the UserInputMetaData prefix starts a line of text, or -1.
func prefixIndex(text string) int { return UserInputMetaDataIndex(text, 0) }

// UserInputMetaDataIndex is where the UserInputMetaData prefix starts a line of text (any
// letter case, after blanks) at or after from, or -1. Streaming back ends use it to hold a
// form back while the rest of the message streams.
func UserInputMetaDataIndex(text string, from int) int {
	lower := strings.ToLower(text)
	p := strings.ToLower(UserInputMetaDataPrefix)
	for from < len(lower) {
		i := strings.Index(lower[from:], p)
		if i < 0 {
			return -1
		}
		i += from
		lineStart := strings.LastIndexByte(lower[:i], '\n') + 1
		if strings.TrimSpace(lower[lineStart:i]) == "" {
			return i
		}
		from = i + len(p)
	}
	return -1
}

// StartsWithUserInputMetaData reports whether text, so far, may be (or is) a message that
// opens with the UserInputMetaData prefix: streaming output holds such text back.
func StartsWithUserInputMetaData(sofar string) bool {
	s := strings.ToLower(strings.TrimLeftFunc(sofar, unicode.IsSpace))
	p := strings.ToLower(UserInputMetaDataPrefix)
	return s == "" || strings.HasPrefix(p, s) || strings.HasPrefix(s, p)
}
