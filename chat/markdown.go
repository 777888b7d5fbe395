package chat

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	xterm "github.com/charmbracelet/x/term"
	"github.com/parley-chat/parley/internal/mdblock"
)

// Agents write Markdown. On a terminal parley chat shows it rendered (render.go); anywhere
// else (a pipe, a file, a test) it prints the source as it came, so that what a script
// reads is the agent's text byte for byte, with no escape sequences.
//
// While a reply streams, a Markdown block cannot be rendered before it ends (a table's
// later rows, a list's next item or a closing fence change how its first line looks), and
// a terminal cannot take back lines already printed once they may have wrapped. So the
// reply is rendered block by block as each one ends, and the block being written shows
// meanwhile on a single live line below them: its latest words, redrawn in place and
// replaced by the rendered block once it is finished. Every other line printed is final.
// A finished message is cut into blocks the same way, so that it reads the same whether it
// streamed or not.

// maxMarkdownWidth bounds the wrapping on a wide terminal: lines of prose longer than this
// are hard to read.
const maxMarkdownWidth = 120

// markdown renders agents' messages for a terminal.
type markdown struct {
	profile colorprofile.Profile // what the terminal takes: colours, or only bold and such
	columns func() int           // the terminal's width now (it may be resized)
	style   string               // the style: GLAMOUR_STYLE, light or dark (the default)
	width   int                  // what the last render wrapped at
}

// chatMarkdown decides how agents' messages are shown: rendered, when the output is a
// terminal that takes escape sequences (TERM is set and is not dumb), or as their source
// (nil). NO_COLOR keeps the rendering but drops its colours (see no-color.org), as
// colorprofile reads it. The caller says whether the output is a terminal, so that a test
// can say it is one.
func chatMarkdown(terminal bool, env []string, columns func() int) *markdown {
	if !terminal {
		return nil
	}
	p := colorprofile.Env(env)
	if p <= colorprofile.NoTTY {
		return nil
	}
	style := "dark"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GLAMOUR_STYLE="); ok && v != "" {
			style = v
		}
	}
	return &markdown{profile: p, columns: columns, style: style}
}

// wrap is the width to wrap at now.
func (m *markdown) wrap() int {
	return min(max(m.columns(), 20), maxMarkdownWidth)
}

// render renders one or more whole blocks of Markdown into lines: colours as the terminal
// takes them, no padding at the ends of lines, no blank lines around.
func (m *markdown) render(src string) []string {
	m.width = m.wrap()
	p, ok := palettes[m.style]
	if !ok {
		p = palettes["dark"]
	}
	out := strings.Join(termRenderer{p: p, width: m.width}.render(printable(src)), "\n")
	if m.profile <= colorprofile.ANSI {
		// The styles take 256 colours: fewer, or none, are mapped down. (256 colours are
		// left as they are: colorprofile maps some of them to their neighbours.)
		var b strings.Builder
		cw := &colorprofile.Writer{Forward: &b, Profile: m.profile}
		cw.WriteString(out)
		out = b.String()
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = unpad(l)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// padding is spaces at the end of a line, styled or not.
var padding = regexp.MustCompile("(?:\x1b\\[[0-9;:]*m| )+$")

// unpad cuts a line's padding, and ends a style the cut left open.
func unpad(l string) string {
	loc := padding.FindStringIndex(l)
	if loc == nil {
		return l
	}
	cut := l[loc[0]:]
	l = l[:loc[0]]
	if l != "" && strings.Contains(cut, "\x1b[") {
		l += "\x1b[m"
	}
	return l
}

// printable drops the control characters of an agent's text but newlines and tabs: none
// reaches the terminal to move its cursor or change its state.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// showBlock prints a block of an agent's message, rendered. The first block of a message
// follows its author's name, on the same line when it renders as one line that fits.
// It reports whether it printed anything.
func (s *session) showBlock(author string, first bool, src string) bool {
	lines := s.md.render(src)
	if len(lines) == 0 {
		return false
	}
	name := s.style(styleName, s.name("agent", author)+">")
	switch {
	case !first:
		s.line("")
	case len(lines) == 1 && ansi.StringWidth(name)+1+ansi.StringWidth(strings.TrimLeft(lines[0], " ")) <= s.md.width:
		s.line(name + " " + strings.TrimLeft(lines[0], " "))
		return true
	default:
		s.line(name)
	}
	s.emit(strings.Join(lines, "\n") + "\n")
	return true
}

// showMarkdown prints a finished agent message, rendered block by block as if it streamed.
func (s *session) showMarkdown(author, text string) {
	shown := false
	for _, b := range mdblock.Blocks(text, true) {
		if s.showBlock(author, !shown, b) {
			shown = true
		}
	}
	if !shown {
		s.line(s.style(styleName, s.name("agent", author)+">"))
	}
}

// streamMarkdown shows what the last piece of the streamed message finished: the blocks
// it ended, rendered, then the live line of the block still being written.
func (s *session) streamMarkdown() {
	src := s.streamed.String()
	blocks := mdblock.Blocks(src[s.rendered:], false)
	for _, b := range blocks {
		if s.showBlock(s.streamBy, s.blocks == 0, b) {
			s.blocks++
		}
		s.rendered += len(b)
	}
	s.showLive(src[s.rendered:])
}

// flushStream renders the rest of the streamed message, finished or not: the agent went on
// to ask, or stopped, or something else is printed for good.
func (s *session) flushStream() {
	if s.md == nil || s.streamID == "" {
		return
	}
	src := s.streamed.String()
	s.clearLive()
	for _, b := range mdblock.Blocks(src[s.rendered:], true) {
		if s.showBlock(s.streamBy, s.blocks == 0, b) {
			s.blocks++
		}
	}
	s.rendered = len(src)
}

// doneMarkdown ends the streamed message with its final text: the blocks not yet shown.
func (s *session) doneMarkdown(m apiMessage) {
	shown := s.streamed.String()[:s.rendered]
	s.clearLive()
	switch {
	case strings.HasPrefix(m.Text, shown):
		for _, b := range mdblock.Blocks(m.Text[s.rendered:], true) {
			if s.showBlock(s.streamBy, s.blocks == 0, b) {
				s.blocks++
			}
		}
	case strings.HasPrefix(shown, m.Text): // the rest was a form, now asked as a question
	default:
		s.showMessage(m)
	}
}

// showLive draws the live line: the last line of the block being written, its end when it
// is too long for the terminal.
func (s *session) showLive(tail string) {
	tail = strings.TrimRight(tail, " \t\n")
	last := tail[strings.LastIndexByte(tail, '\n')+1:]
	last = strings.TrimSpace(strings.ReplaceAll(printable(last), "\t", " "))
	if last == "" {
		s.clearLive()
		return
	}
	prefix := "  "
	if s.blocks == 0 {
		prefix = s.style(styleName, s.name("agent", s.streamBy)+">") + " "
	}
	room := s.md.columns() - 1 - ansi.StringWidth(prefix)
	if w := ansi.StringWidth(last); w > room && room > 1 {
		last = ansi.TruncateLeft(last, w-room+1, "…")
	}
	if s.promptShown {
		s.out.Write([]byte("\n"))
		s.promptShown = false
	}
	s.out.Write([]byte("\r\x1b[K" + prefix + s.style(styleDim, last)))
	s.liveShown = true
}

// clearLive erases the live line, for other output to take its place.
func (s *session) clearLive() {
	if s.liveShown {
		s.out.Write([]byte("\r\x1b[K"))
		s.liveShown = false
	}
}

// columns is the width of the terminal w is, 80 when it cannot tell.
func columns(w any) int {
	if f, ok := w.(xterm.File); ok {
		if cols, _, err := xterm.GetSize(f.Fd()); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}
