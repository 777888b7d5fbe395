package intake

import (
	"errors"
	"fmt"
	"mime"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
	"github.com/parley-chat/parley/domain"
)

// Limits on what a model may leave out of its items: about 4 KB of prose plus eight times its
// intent may be summarized by the intent alone; more than that would be lost to the agent,
// which reads the intent and the documents only.
const (
	uncoveredSlackBytes = 4096
	uncoveredPerIntent  = 8
	maxTitleRunes       = 100
	// maxModelIntentBytes bounds the intent: about a thousand tokens is no longer a concise
	// request, and a long one could stand in for text the agent would never see.
	maxModelIntentBytes = 4096
)

// Validate checks and cleans an analysis a model made of text, so that a model can neither
// invent nor lose content. It rejects an empty intent, one longer than the text or than
// 4 KB, an item
// without content, an item whose content is not in the text (compared with runs of
// whitespace collapsed: a model may reflow, not rewrite or truncate), and items that leave
// too much of the text out (more than 4 KB plus eight times the intent's size, which a
// concise intent could not stand for).
//
// Items found in the text get the text's own bytes back, whatever whitespace the model
// changed; a type becomes a bare, lower-case type/subtype (a fence language such as "json"
// is understood, anything else is text/plain); titles become one line of at most 100
// characters; the language becomes an ISO 639-1 code or is dropped. Items past MaxItems are
// merged into a last "More context" item. Via, Tokens and Threshold are kept.
func Validate(text string, a domain.Analysis) (domain.Analysis, error) {
	text = clean(text)
	intent := strings.TrimSpace(clean(a.Intent))
	switch {
	case intent == "":
		return domain.Analysis{}, errors.New("intake: the intent is empty")
	case len(intent) > len(text):
		return domain.Analysis{}, fmt.Errorf("intake: the intent (%d bytes) is longer than the message (%d bytes)", len(intent), len(text))
	case len(intent) > maxModelIntentBytes:
		return domain.Analysis{}, fmt.Errorf("intake: the intent (%d bytes) is not concise: at most %d bytes", len(intent), maxModelIntentBytes)
	}
	norm, offsets := normalize(text)
	spans := make([]span, 0, len(a.Items))
	items := make([]domain.ContextItem, 0, len(a.Items))
	for i, it := range a.Items {
		content, _ := normalize(clean(it.Content))
		if content == "" {
			return domain.Analysis{}, fmt.Errorf("intake: item %d has no content", i+1)
		}
		at := strings.Index(norm, content)
		if at < 0 {
			return domain.Analysis{}, fmt.Errorf("intake: item %d (%d bytes) is not in the message", i+1, len(it.Content))
		}
		spans = append(spans, span{at, at + len(content)})
		// Content starts and ends with copied bytes, which map back to the text one for one.
		start, end := offsets(at), offsets(at+len(content)-1)+1
		items = append(items, domain.ContextItem{
			Title:    cleanTitle(it.Title),
			MimeType: cleanMime(it.MimeType),
			Content:  text[start:end],
		})
	}
	if left := len(norm) - covered(spans); left > uncoveredSlackBytes+uncoveredPerIntent*len(intent) {
		return domain.Analysis{}, fmt.Errorf("intake: the items leave out %d of %d bytes, more than the intent (%d bytes) can stand for", left, len(norm), len(intent))
	}
	return domain.Analysis{
		Language:  cleanLanguage(a.Language),
		Intent:    intent,
		Items:     capItems(items),
		Via:       a.Via,
		Tokens:    a.Tokens,
		Threshold: a.Threshold,
	}, nil
}

// normalize collapses each run of whitespace in s into one space and trims both ends. The
// function it returns maps a byte offset in the result back to s.
func normalize(s string) (string, func(int) int) {
	var b strings.Builder
	b.Grow(len(s))
	// A mark says that normalized offset norm is s's offset orig, and that the bytes after it
	// up to the next mark are copied one for one. A single space copies as it is and needs no
	// mark, so there are about as many marks as lines.
	type mark struct{ norm, orig int }
	var marks []mark
	run, runStart := 0, 0 // the whitespace run before the current rune
	for i, r := range s {
		if unicode.IsSpace(r) {
			if run == 0 {
				runStart = i
			}
			run += utf8.RuneLen(r)
			continue
		}
		switch {
		case b.Len() == 0:
			marks = append(marks, mark{0, i})
		case run == 1 && s[runStart] == ' ':
			b.WriteByte(' ')
		case run > 0:
			b.WriteByte(' ')
			marks = append(marks, mark{b.Len(), i})
		}
		run = 0
		b.WriteRune(r)
	}
	return b.String(), func(n int) int {
		k, found := slices.BinarySearchFunc(marks, n, func(m mark, n int) int { return m.norm - n })
		if !found {
			k--
		}
		return marks[k].orig + n - marks[k].norm
	}
}

// span is a range of bytes [start, end).
type span struct{ start, end int }

// covered is how many bytes the spans cover together.
func covered(spans []span) int {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	total, reach := 0, 0
	for _, s := range spans {
		start := max(s.start, reach)
		if s.end > start {
			total += s.end - start
			reach = s.end
		}
	}
	return total
}

var mimeRe = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$`)

// cleanMime is a bare type/subtype for what a model wrote: "application/json; charset=utf-8"
// and "JSON" both become application/json; anything unclear becomes text/plain.
func cleanMime(m string) string {
	m = strings.ToLower(strings.TrimSpace(m))
	if t, ok := languages[m]; ok {
		return t.mime
	}
	if mt, _, err := mime.ParseMediaType(m); err == nil && mimeRe.MatchString(mt) {
		return mt
	}
	return "text/plain"
}

// cleanTitle makes a title one line of at most maxTitleRunes characters.
func cleanTitle(t string) string {
	t = strings.Join(strings.FieldsFunc(clean(t), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if utf8.RuneCountInString(t) > maxTitleRunes {
		t = string([]rune(t)[:maxTitleRunes-1]) + "…"
	}
	return t
}

// cleanLanguage makes an ISO 639-1 code of what a model wrote ("de", "de-CH", "DEU",
// "German"), or "" when it cannot.
func cleanLanguage(l string) string {
	l = strings.TrimSpace(l)
	code := strings.ToLower(l)
	if i := strings.IndexAny(code, "-_"); i >= 0 {
		code = code[:i]
	}
	switch {
	case len(code) == 2 && isLower(code):
		return code
	case len(code) == 3 && isLower(code):
		if lang := whatlanggo.CodeToLang(code); lang >= 0 {
			return lang.Iso6391()
		}
	}
	for lang, name := range whatlanggo.Langs {
		if strings.EqualFold(name, l) {
			return lang.Iso6391()
		}
	}
	return ""
}

func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
