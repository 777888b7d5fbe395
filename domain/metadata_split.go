package domain

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
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
// letter case, after blanks), the line starting at from or a later one, or -1. It reads each
// byte of text once.
func UserInputMetaDataIndex(text string, from int) int {
	for {
		at := LineBlanks(text, from)
		if opens, _ := OpensUserInputMetaData(text[at:]); opens {
			return at
		}
		nl := strings.IndexByte(text[at:], '\n')
		if nl < 0 {
			return -1
		}
		from = at + nl + 1
	}
}

// LineBlanks is the offset of the first character of text at or after i that is not a blank
// of its line: white space other than a line feed. A character cut at the end of text is not
// a blank (its end may yet come).
func LineBlanks(text string, i int) int {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == '\n' || !unicode.IsSpace(r) {
			return i
		}
		i += n
	}
	return i
}

// OpensUserInputMetaData reports whether s opens with the UserInputMetaData prefix (any
// letter case), and, when it does not, whether it still may: s is the start of the prefix.
// It reads no more of s than the prefix's length.
func OpensUserInputMetaData(s string) (opens, may bool) {
	p := UserInputMetaDataPrefix
	if len(s) >= len(p) {
		return strings.EqualFold(s[:len(p)], p), false
	}
	return false, strings.EqualFold(s, p[:len(s)])
}
