package intake

import (
	"encoding/json"
	"regexp"
	"strings"
)

// fence finds fenced code (``` or ~~~, CommonMark style, up to 3 spaces of indentation). The
// info string's first word is the language, which gives the type and the title; a file name
// in it (```go main.go, ```yaml:compose.yml) names the block. A fence left open runs to the
// end of the message, as in Markdown.
func (sc *scanner) fence(i int) (block, bool) {
	l := sc.lines[i]
	if l.indent > 3 {
		return block{}, false
	}
	open := sc.content(i)[l.indent:]
	char, n := fenceRun(open)
	if n < 3 {
		return block{}, false
	}
	info := strings.TrimSpace(open[n:])
	if char == '`' && strings.Contains(info, "`") {
		return block{}, false // inline code, not a fence
	}
	closing := len(sc.lines)
	for j := i + 1; j < len(sc.lines); j++ {
		lj := sc.lines[j]
		if lj.indent > 3 {
			continue
		}
		c, m := fenceRun(sc.content(j)[lj.indent:])
		if c == char && m >= n && strings.TrimSpace(sc.content(j)[lj.indent+m:]) == "" {
			closing = j
			break
		}
	}
	b := block{from: i, to: min(closing+1, len(sc.lines))}
	b.start = l.next
	b.end = b.start
	if closing > i+1 {
		b.end = sc.lines[closing-1].end
	}
	lang, rest := fenceLanguage(info)
	b.mime, b.title = codeType(lang, sc.text[b.start:b.end])
	b.fileName = fileNameIn(rest, b.mime)
	return b, true
}

// fenceRun returns the fence character s starts with and how many times it repeats.
func fenceRun(s string) (byte, int) {
	if s == "" || s[0] != '`' && s[0] != '~' {
		return 0, 0
	}
	n := 1
	for n < len(s) && s[n] == s[0] {
		n++
	}
	return s[0], n
}

// fenceLanguage splits a fence's info string into its language (lower case, without the
// decoration some writers add: {.go}, language-go) and the rest.
func fenceLanguage(info string) (lang, rest string) {
	lang, rest, _ = strings.Cut(info, " ")
	if l, file, ok := strings.Cut(lang, ":"); ok {
		lang, rest = l, file+" "+rest
	}
	lang = strings.ToLower(strings.Trim(lang, "{}."))
	lang = strings.TrimPrefix(lang, "language-")
	if len(lang) > 20 || strings.ContainsAny(lang, "\"'=<>") {
		lang = ""
	}
	return lang, rest
}

// codeType is the type and title of fenced code in a language; code without a language is
// sniffed for JSON, logs and stack traces.
func codeType(lang, content string) (mime, title string) {
	if lang == "" {
		return sniff(content)
	}
	if t, ok := languages[lang]; ok {
		if t.title != "" {
			return t.mime, t.title
		}
		return t.mime, "Code (" + lang + ")"
	}
	return "text/plain", "Code (" + lang + ")"
}

// sniff types a block that does not say what it is.
func sniff(content string) (mime, title string) {
	if len(content) > 0 && (content[0] == '{' || content[0] == '[') && json.Valid([]byte(content)) {
		return "application/json", "JSON"
	}
	first := strings.TrimRight(firstLine(strings.TrimLeft(content, " \t\r\n")), "\r")
	if len(first) > headBytes {
		first = first[:headBytes]
	}
	switch {
	case logLineRe.MatchString(first):
		return "text/x-log", "Log excerpt"
	case traceStartRe.MatchString(first), headerRe.MatchString(first):
		return "text/plain", "Stack trace"
	}
	return "text/plain", "Code"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// json finds bare JSON: a line starting with { or [ that is valid JSON on its own (and the
// JSON lines after it), or a pretty-printed value closed by a bracket at the same
// indentation before the next blank line.
func (sc *scanner) json(i int) (block, bool) {
	if i < sc.noJSON {
		return block{}, false
	}
	t := sc.trimmed(i)
	if t == "" || t[0] != '{' && t[0] != '[' {
		return block{}, false
	}
	closer := byte('}')
	if t[0] == '[' {
		closer = ']'
	}
	if sc.jsonLine(i) {
		j := i + 1
		for j < len(sc.lines) && sc.jsonLine(j) {
			j++
		}
		if j-i > 1 {
			return sc.span(i, j, "application/x-ndjson", "JSON lines"), true
		}
		return sc.span(i, j, "application/json", "JSON"), true
	}
	if last := strings.TrimRight(sc.content(i), " \t"); last[len(last)-1] == closer {
		return block{}, false // one line that looks complete but is not JSON
	}
	indent := sc.content(i)[:sc.lines[i].indent]
	for j := i + 1; j < len(sc.lines); j++ {
		if sc.lines[j].blank {
			sc.noJSON = j
			return block{}, false
		}
		c := strings.TrimRight(sc.content(j), " \t")
		if len(c) == len(indent)+1 && c[len(c)-1] == closer && strings.HasPrefix(c, indent) {
			if json.Valid([]byte(sc.text[sc.lines[i].start:sc.lines[j].end])) {
				return sc.span(i, j+1, "application/json", "JSON"), true
			}
			sc.noJSON = j + 1
			return block{}, false
		}
	}
	sc.noJSON = len(sc.lines)
	return block{}, false
}

// jsonLine reports whether line i is a JSON object or array on its own.
func (sc *scanner) jsonLine(i int) bool {
	c := strings.TrimSpace(sc.content(i))
	if len(c) < 2 {
		return false
	}
	open, last := c[0], c[len(c)-1]
	return (open == '{' && last == '}' || open == '[' && last == ']') && json.Valid([]byte(c))
}

var (
	// yamlKeyRe matches a mapping key with no spaces (so that prose like "Here is my
	// config:" is not one) or a quoted key.
	yamlKeyRe = regexp.MustCompile(`^(?:"[^"]{1,60}"|'[^']{1,60}'|[A-Za-z_$@][\w.\-/$@]{0,60}):(?:[ \t]|$)`)
	// yamlItemRe matches a sequence item.
	yamlItemRe = regexp.MustCompile(`^-(?:[ \t]|$)`)
)

// yaml finds YAML: from a "---" line or a key at the left margin, a run of keys, sequence
// items, comments and indented lines with at least one nested key ("key: lines with
// nesting"), so that a few "Label: text" lines of prose are not YAML.
func (sc *scanner) yaml(i int) (block, bool) {
	if i < sc.noYAML || sc.lines[i].indent > 0 {
		return block{}, false
	}
	h := sc.head(i)
	doc := strings.TrimRight(h, " \t") == "---"
	if !doc && !yamlKeyRe.MatchString(h) {
		return block{}, false
	}
	keys, nested := 0, 0
	if !doc {
		keys++
	}
	last := i
	j := i + 1
	for j < len(sc.lines) {
		if sc.lines[j].blank {
			k := sc.nextNonBlank(j, 3)
			if k < 0 || !(sc.lines[k].indent > 0 || yamlKeyRe.MatchString(sc.head(k)) || strings.HasPrefix(sc.head(k), "#")) {
				break
			}
			j = k
			continue
		}
		h := sc.head(j)
		t := sc.trimmed(j)
		switch {
		case sc.lines[j].indent > 0:
			if yamlKeyRe.MatchString(t) || yamlItemRe.MatchString(t) && yamlKeyRe.MatchString(strings.TrimLeft(t[1:], " \t")) {
				nested++
			}
		case h == "---" || h == "..." || strings.HasPrefix(h, "#"):
		case yamlKeyRe.MatchString(h):
			keys++
		case yamlItemRe.MatchString(h) && j == last+1:
			if yamlKeyRe.MatchString(strings.TrimLeft(h[1:], " \t")) {
				nested++
			}
		default:
			goto done
		}
		last = j
		j++
	}
done:
	if nested == 0 || keys+nested < 3 {
		sc.noYAML = last + 1
		return block{}, false
	}
	return sc.span(i, last+1, "application/yaml", "YAML"), true
}

// diffHeaderRe matches the lines a unified diff starts with.
var diffHeaderRe = regexp.MustCompile(`^(?:diff --git |diff -|Index: |--- \S|@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@)`)

// diff finds an unfenced unified diff: from a diff, ---/+++ or hunk header, the lines of its
// hunks and file headers. Without it the removed lines of a diff would read as a list.
func (sc *scanner) diff(i int) (block, bool) {
	h := sc.head(i)
	if i < sc.noDiff || !diffHeaderRe.MatchString(h) {
		return block{}, false
	}
	if strings.HasPrefix(h, "--- ") && (i+1 >= len(sc.lines) || !strings.HasPrefix(sc.head(i+1), "+++ ")) {
		return block{}, false
	}
	hunks, last := 0, i
	for j := i; j < len(sc.lines); j++ {
		h := sc.head(j)
		switch {
		case strings.HasPrefix(h, "@@ "):
			hunks++
		case diffHeaderRe.MatchString(h), strings.HasPrefix(h, "+++ "), strings.HasPrefix(h, "index "),
			strings.HasPrefix(h, "new file mode"), strings.HasPrefix(h, "deleted file mode"),
			strings.HasPrefix(h, "similarity index"), strings.HasPrefix(h, "rename "), strings.HasPrefix(h, `\ No newline`):
		case h == "" && j+1 < len(sc.lines) && strings.HasPrefix(sc.head(j+1), " "):
			// an empty context line some editors strip the space of
		case h != "" && (h[0] == ' ' || h[0] == '+' || h[0] == '-'):
		default:
			goto done
		}
		last = j
	}
done:
	if hunks == 0 {
		sc.noDiff = last + 1
		return block{}, false
	}
	return sc.span(i, last+1, "text/x-diff", "Diff"), true
}
