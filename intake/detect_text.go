package intake

import (
	"regexp"
	"strings"
)

// Sizes that make prose structured.
const (
	minQuoteLines   = 3
	minSpeakerLines = 3
	maxSpeakers     = 6
	minListItems    = 8
	minTableRows    = 3
	// maxWordsPerCell tells a comma-separated table from sentences with commas.
	maxWordsPerCell = 3
)

var (
	// speakerRe matches "Name: text", optionally after a [time] or hh:mm stamp.
	speakerRe = regexp.MustCompile(`^(?:\[[^\]]{1,30}\][ \t]*|\(?\d{1,2}:\d{2}(?::\d{2})?\)?[ \t]+)?(\p{Lu}[\p{L}'.\-]{0,24}(?: \p{Lu}[\p{L}'.\-]{0,24}){0,2}):[ \t]+\S`)
	// listItemRe matches a list item: a bullet, a number or a letter, then text.
	listItemRe = regexp.MustCompile(`^[ \t]{0,8}(?:[-*+•▪◦‣]|\d{1,4}[.)]|[a-zA-Z][.)]|\(\w{1,3}\))[ \t]+\S`)
)

// quote finds quoted text: three lines or more starting with ">", blank lines allowed
// between quoted paragraphs.
func (sc *scanner) quote(i int) (block, bool) {
	if !sc.quoted(i) {
		return block{}, false
	}
	n, last := 0, i
	for j := i; j < len(sc.lines); j++ {
		if sc.quoted(j) {
			n++
			last = j
			continue
		}
		if sc.lines[j].blank && j+1 < len(sc.lines) && sc.quoted(j+1) {
			continue
		}
		break
	}
	if n < minQuoteLines {
		return block{}, false
	}
	return sc.span(i, last+1, "text/markdown", "Transcript"), true
}

func (sc *scanner) quoted(i int) bool {
	l := sc.lines[i]
	return l.indent <= 3 && l.start+l.indent < l.end && sc.text[l.start+l.indent] == '>'
}

// speakers finds a transcript of "Name: text" lines by a few people, who speak more than
// once each on average; a turn may go on over a few lines.
func (sc *scanner) speakers(i int) (block, bool) {
	if i < sc.noSpeaker {
		return block{}, false
	}
	name := sc.speaker(i)
	if name == "" {
		return block{}, false
	}
	names := map[string]bool{}
	turns, last := 0, i
	for j := i; j < len(sc.lines); {
		if name := sc.speaker(j); name != "" {
			names[name] = true
			turns++
			last = j
			j++
			continue
		}
		// A line that is not a turn belongs to the one before when another turn follows soon.
		k := j
		for k < len(sc.lines) && k < j+3 && sc.speaker(k) == "" {
			k++
		}
		if k >= len(sc.lines) || k == j+3 {
			break
		}
		j = k
	}
	if turns < minSpeakerLines || len(names) > maxSpeakers || turns <= len(names) {
		sc.noSpeaker = last + 1
		return block{}, false
	}
	return sc.span(i, last+1, "text/plain", "Transcript"), true
}

// speaker is the name line i starts with as a turn of a transcript, or "".
func (sc *scanner) speaker(i int) string {
	if sc.lines[i].blank || sc.lines[i].indent > 0 {
		return ""
	}
	m := speakerRe.FindStringSubmatch(sc.head(i))
	if m == nil {
		return ""
	}
	return m[1]
}

// list finds a long list: eight items or more, with wrapped or nested lines and blank lines
// between items.
func (sc *scanner) list(i int) (block, bool) {
	if i < sc.noList || !listItemRe.MatchString(sc.head(i)) {
		return block{}, false
	}
	items, last := 0, i
	for j := i; j < len(sc.lines); j++ {
		switch {
		case listItemRe.MatchString(sc.head(j)):
			items++
		case sc.lines[j].blank:
			if k := sc.nextNonBlank(j, 2); k >= 0 && (listItemRe.MatchString(sc.head(k)) || sc.lines[k].indent > 0) {
				continue
			}
			goto done
		case sc.lines[j].indent > 0:
			// a wrapped or nested line
		default:
			goto done
		}
		last = j
	}
done:
	if items < minListItems {
		sc.noList = last + 1
		return block{}, false
	}
	return sc.span(i, last+1, "text/markdown", "List"), true
}

// tableKinds are the separators of tables, by preference when runs are as long.
var tableKinds = []struct {
	sep         byte
	mime, title string
}{
	{'\t', "text/tab-separated-values", "TSV table"},
	{',', "text/csv", "CSV table"},
	{';', "text/csv", "CSV table"},
	{'|', "text/markdown", "Table"},
}

// table finds CSV, TSV and Markdown tables: three lines or more with the same number (one or
// more) of one separator outside quotes. Comma and semicolon runs that read like sentences or
// code (most lines end with the separator) are not tables.
func (sc *scanner) table(i int) (block, bool) {
	if i < sc.noCSV {
		return block{}, false
	}
	first := sc.separators(i)
	best, bestEnd, farthest := -1, i, i
	for k, kind := range tableKinds {
		want := first[k]
		if want == 0 {
			continue
		}
		j := i + 1
		for j < len(sc.lines) && !sc.lines[j].blank && sc.separators(j)[k] == want {
			j++
		}
		farthest = max(farthest, j)
		if j-i >= minTableRows && j > bestEnd && sc.tabular(i, j, kind.sep, want) {
			best, bestEnd = k, j
		}
	}
	if best < 0 {
		if farthest-i >= minTableRows {
			sc.noCSV = farthest
		}
		return block{}, false
	}
	kind := tableKinds[best]
	return sc.span(i, bestEnd, kind.mime, kind.title), true
}

// separators counts each kind's separator in line i, outside double quotes; tabs of the
// indentation do not count.
func (sc *scanner) separators(i int) [4]int {
	var n [4]int
	l := sc.lines[i]
	quoted := false
	for _, c := range []byte(sc.text[l.start+l.indent : l.end]) {
		switch c {
		case '"':
			quoted = !quoted
		case '\t':
			if !quoted {
				n[0]++
			}
		case ',':
			if !quoted {
				n[1]++
			}
		case ';':
			if !quoted {
				n[2]++
			}
		case '|':
			if !quoted {
				n[3]++
			}
		}
	}
	return n
}

// tabular tells rows of a table from prose or code that happens to have as many commas or
// semicolons on each line.
func (sc *scanner) tabular(from, to int, sep byte, per int) bool {
	if sep != ',' && sep != ';' {
		return true
	}
	trailing, words := 0, 0
	for j := from; j < to; j++ {
		c := strings.TrimRight(sc.content(j), " \t")
		if c[len(c)-1] == sep {
			trailing++
		}
		words += len(strings.Fields(sc.head(j)))
	}
	rows := to - from
	if trailing*2 > rows {
		return false
	}
	// Words per cell, over the heads of the lines only, which is enough to tell.
	return words <= maxWordsPerCell*rows*(per+1)
}
