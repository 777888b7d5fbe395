package intake

import (
	"strings"
	"unicode/utf8"
)

// headBytes is how much of a line the line classifiers look at, so that a megabyte-long
// line costs no more to classify than a short one.
const headBytes = 256

// line is one line of the message: its content is text[start:end], without the line break
// (and without a \r before it); the next line starts at next.
type line struct {
	start, end, next int
	indent           int // leading spaces and tabs, in bytes
	blank            bool
}

// block is a run of lines the scanner recognised: lines [from, to), its content
// text[start:end] (fenced code without its fences), the item's type and title.
type block struct {
	from, to   int
	start, end int
	mime       string
	title      string
	fileName   string // named by the block itself (a fence's info string)
}

// scanner finds blocks in a message, line by line, in linear time.
type scanner struct {
	text  string
	lines []line

	// Detectors that scan ahead and fail remember how far they looked and do not start again
	// before that line: without it, a long run of near misses would be scanned once per line.
	noDiff, noJSON, noYAML, noList, noCSV, noSpeaker int
}

func newScanner(text string) *scanner {
	sc := &scanner{text: text}
	sc.lines = make([]line, 0, strings.Count(text, "\n")+1)
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		next := len(text)
		if end < 0 {
			end = len(text)
		} else {
			end += start
			next = end + 1
		}
		l := line{start: start, end: end, next: next}
		if l.end > l.start && text[l.end-1] == '\r' {
			l.end--
		}
		for l.indent < l.end-l.start && (text[l.start+l.indent] == ' ' || text[l.start+l.indent] == '\t') {
			l.indent++
		}
		rest := text[l.start+l.indent : l.end]
		l.blank = strings.TrimSpace(rest) == ""
		sc.lines = append(sc.lines, l)
		start = next
	}
	return sc
}

// content is line i without its line break.
func (sc *scanner) content(i int) string {
	l := sc.lines[i]
	return sc.text[l.start:l.end]
}

// head is the start of line i, what classifiers look at.
func (sc *scanner) head(i int) string {
	l := sc.lines[i]
	if l.end-l.start > headBytes {
		return sc.text[l.start : l.start+headBytes]
	}
	return sc.text[l.start:l.end]
}

// trimmed is line i without its indentation, cut to headBytes.
func (sc *scanner) trimmed(i int) string {
	return sc.head(i)[min(sc.lines[i].indent, len(sc.head(i))):]
}

// span is the block of lines [from, to) with its content from the start of line from to the
// end of line to-1.
func (sc *scanner) span(from, to int, mime, title string) block {
	return block{from: from, to: to, start: sc.lines[from].start, end: sc.lines[to-1].end, mime: mime, title: title}
}

// scan returns the blocks of the message in order. At each line it tries the detectors
// from the most to the least specific; a line no detector claims is prose.
func (sc *scanner) scan() []block {
	var blocks []block
	detectors := []func(int) (block, bool){
		sc.fence, sc.diff, sc.logTrace, sc.json, sc.yaml, sc.quote, sc.speakers, sc.list, sc.table,
	}
	for i := 0; i < len(sc.lines); {
		if sc.lines[i].blank {
			i++
			continue
		}
		found := false
		for _, detect := range detectors {
			if b, ok := detect(i); ok {
				blocks = append(blocks, b)
				i = b.to
				found = true
				break
			}
		}
		if !found {
			i++
		}
	}
	return blocks
}

// nextNonBlank is the first non-blank line at or after i within limit lines, or -1.
func (sc *scanner) nextNonBlank(i, limit int) int {
	for k := i; k < len(sc.lines) && k < i+limit; k++ {
		if !sc.lines[k].blank {
			return k
		}
	}
	return -1
}

// clean makes text valid UTF-8 without NUL bytes, replacing both with U+FFFD; valid text
// comes back as it is.
func clean(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
