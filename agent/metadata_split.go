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
// letter case, after blanks), the line starting at from or a later one, or -1.
func UserInputMetaDataIndex(text string, from int) int {
	for from <= len(text) {
		if at := UserInputMetaDataAt(text[from:]); at >= 0 {
			return from + at
		}
		nl := strings.IndexByte(text[from:], '\n')
		if nl < 0 {
			break
		}
		from += nl + 1
	}
	return -1
}

// UserInputMetaDataAt is where the UserInputMetaData prefix opens line (any letter case,
// after blanks), or -1. It reads the blanks and the prefix's length of line, no more, so
// that a streaming back end can ask it of a growing line at every piece. Streaming back
// ends use it to hold a form back while the rest of the message streams.
func UserInputMetaDataAt(line string) int {
	t := strings.TrimLeftFunc(line, unicode.IsSpace)
	p := UserInputMetaDataPrefix
	if len(t) < len(p) || !strings.EqualFold(t[:len(p)], p) {
		return -1
	}
	return len(line) - len(t)
}

// StartsWithUserInputMetaData reports whether text, so far, may be (or is) a message that
// opens with the UserInputMetaData prefix: streaming output holds such text back. It reads
// no more of text than the blanks and the prefix's length.
func StartsWithUserInputMetaData(sofar string) bool {
	s := strings.TrimLeftFunc(sofar, unicode.IsSpace)
	p := UserInputMetaDataPrefix
	if len(s) > len(p) {
		s = s[:len(p)]
	}
	return strings.EqualFold(s, p[:len(s)])
}
