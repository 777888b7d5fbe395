package intake

import (
	"strings"

	"github.com/parley-chat/parley/domain"
)

// MaxItems is the most context items a message is split into: past it, the remaining blocks
// are merged into a last item, so that a message of a thousand snippets does not become a
// thousand documents.
const MaxItems = 50

// Sizes the built-in splitter works with, in bytes.
const (
	// minBlockBytes is the size under which a block stays inline in the intent.
	minBlockBytes = 200
	// specProseBytes is how much prose may remain around the blocks before it counts as a
	// specification of its own and the intent keeps only its gist.
	specProseBytes = 2000
	// maxIntentBytes caps the gist of a specification.
	maxIntentBytes = 1000
)

// noProseIntent is the intent of a message that is all blocks.
const noProseIntent = "The message is in the attached documents."

// Split is the built-in splitter: offline, deterministic and linear in the size of the
// message. It finds, line by line, fenced code, unified diffs, bare JSON, YAML, CSV/TSV and
// Markdown tables, stack traces, log excerpts, long lists and quoted transcripts. Blocks of
// 200 bytes or more become context items (content as written, fences stripped), smaller
// ones stay in the intent. The intent is the remaining prose, blank lines collapsed. When
// that prose is itself long (over about 2,000 bytes) it becomes a "Specification" item and
// the intent keeps its first paragraph and the paragraphs that ask for something. Nothing
// is lost: every character not in the intent is in an item, except the fence lines of
// fenced code. At most MaxItems items come back.
//
// Invalid UTF-8 and NUL bytes are replaced with U+FFFD first. The language is detected on
// the prose alone.
func Split(text string) domain.Analysis {
	text = clean(text)
	sc := newScanner(text)
	blocks := sc.scan()

	var prose, langProse tidy
	var items []domain.ContextItem
	titles := map[string]bool{}
	next := 0 // first line not yet written to prose
	prevEnd := 0
	for _, b := range blocks {
		for ; next < b.from; next++ {
			prose.line(sc.content(next))
			langProse.limited(sc.content(next))
		}
		if b.end-b.start < minBlockBytes {
			for ; next < b.to; next++ {
				prose.line(sc.content(next))
			}
		} else {
			items = append(items, sc.item(b, prevEnd, titles))
			prose.gap()
		}
		langProse.gap()
		next = b.to
		prevEnd = b.to
	}
	for ; next < len(sc.lines); next++ {
		prose.line(sc.content(next))
		langProse.limited(sc.content(next))
	}

	a := domain.Analysis{Intent: prose.String(), Language: DetectLanguage(langProse.String()), Via: "builtin"}
	if len(a.Intent) > specProseBytes {
		spec := domain.ContextItem{Title: "Specification", MimeType: "text/markdown", Content: a.Intent}
		items = append([]domain.ContextItem{spec}, items...)
		a.Intent = gist(a.Intent)
	}
	if a.Intent == "" && len(items) > 0 {
		a.Intent = noProseIntent
	}
	a.Items = capItems(items)
	return a
}

// item makes the context item of a block, titled by a file name the prose line right
// before it names, when there is one of a fitting type not used yet.
func (sc *scanner) item(b block, prevEnd int, titles map[string]bool) domain.ContextItem {
	title := b.title
	name := b.fileName
	if name == "" {
		// The nearest non-blank line before the block, if it is prose.
		p := b.from - 1
		for p >= prevEnd && p >= b.from-2 && sc.lines[p].blank {
			p--
		}
		if p >= prevEnd && p >= 0 && !sc.lines[p].blank {
			name = fileNameIn(sc.content(p), b.mime)
		}
	}
	if name != "" && !titles[name] {
		titles[name] = true
		title = name
	}
	return domain.ContextItem{Title: title, MimeType: b.mime, Content: sc.text[b.start:b.end]}
}

// capItems merges the items past MaxItems-1 into one last "More context" item, in order and
// separated by blank lines, typed as they are when they all have one type.
func capItems(items []domain.ContextItem) []domain.ContextItem {
	if len(items) <= MaxItems {
		return items
	}
	rest := items[MaxItems-1:]
	mimeType := rest[0].MimeType
	size := 0
	for _, it := range rest {
		if it.MimeType != mimeType {
			mimeType = "text/plain"
		}
		size += len(it.Content) + 2
	}
	var b strings.Builder
	b.Grow(size)
	for i, it := range rest {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(it.Content)
	}
	out := append(items[:MaxItems-1:MaxItems-1], domain.ContextItem{Title: "More context", MimeType: mimeType, Content: b.String()})
	return out
}

// tidy writes lines with trailing whitespace removed and runs of blank lines collapsed to
// one, without leading or trailing blank lines.
type tidy struct {
	b       strings.Builder
	blank   bool
	started bool
}

func (t *tidy) line(s string) {
	s = strings.TrimRight(s, " \t\r\f\v")
	if s == "" {
		t.gap()
		return
	}
	if t.started {
		t.b.WriteByte('\n')
		if t.blank {
			t.b.WriteByte('\n')
		}
	}
	t.b.WriteString(s)
	t.started, t.blank = true, false
}

// limited writes a line while the text is short enough to detect a language on.
func (t *tidy) limited(s string) {
	if t.b.Len() < 2*maxSampleBytes {
		if len(s) > 2*maxSampleBytes {
			s = s[:2*maxSampleBytes]
		}
		t.line(s)
	}
}

// gap marks a paragraph break, where a blank line or a block was.
func (t *tidy) gap() { t.blank = t.started }

func (t *tidy) String() string { return t.b.String() }
