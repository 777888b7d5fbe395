// Package mdblock cuts Markdown into the blocks it renders as, reading it line by line as
// it is written: the page (views) renders a streaming message block by block with it, and
// the terminal client (chat) prints each block once it is finished.
package mdblock

import "strings"

// Scanner finds where the blocks of a Markdown text end, reading it line by line, so
// that each block renders alone as it would within the whole text. It decides from the
// lines seen so far only: a block it ends stays ended whatever follows. Where it cannot be
// sure (a list, indented code, a fence) it keeps the block open: a larger block is always
// rendered right. Link reference definitions are the exception: they apply within their
// block only.
type Scanner struct {
	lines int  // lines of the current block
	blank bool // the last line was blank
	// loose: the block may go on after a blank line (a list item, indented code).
	loose bool
	// fence is the character of the fenced code block the scanner is in, 0 outside one.
	fence       byte
	fenceLen    int
	fenceIndent int
	// fenceEnds: the fence is the block's own, and the block ends with it.
	fenceEnds bool
}

// Line reads one complete line (its '\n' included) that starts at offset off, and returns
// the offsets where blocks end: before the line, after it, both, or none.
func (s *Scanner) Line(l string, off int) []int {
	end := off + len(l)
	text := strings.TrimRight(l, "\n")
	indent, rest := IndentOf(text)
	if s.fence != 0 {
		if indent <= s.fenceIndent+3 && closesFence(rest, s.fence, s.fenceLen) {
			s.fence = 0
			if s.fenceEnds {
				s.reset()
				return []int{end}
			}
		}
		s.lines++
		return nil
	}
	if strings.TrimSpace(text) == "" {
		if s.lines == 0 {
			return nil // blank lines before a block are part of it, and render as nothing
		}
		s.blank = true
		if !s.loose {
			s.reset()
			return []int{end}
		}
		return nil
	}
	var cuts []int
	if s.blank && s.loose && !(indent > 0 || listItem(rest)) {
		// A blank line, then a line that cannot belong to the list or code above.
		cuts = append(cuts, off)
		s.reset()
	}
	s.blank = false
	first := s.lines == 0
	s.lines++
	if c, n := fenceOpen(rest); n > 0 {
		s.fence, s.fenceLen, s.fenceIndent = c, n, indent
		s.fenceEnds = indent <= 3 && !s.loose
		return cuts
	}
	if listItem(rest) || indent >= 4 {
		s.loose = true
	}
	if first && indent <= 3 && (atxHeading(rest) || thematicBreak(rest)) && !s.loose {
		s.reset()
		cuts = append(cuts, end)
	}
	return cuts
}

func (s *Scanner) reset() { *s = Scanner{} }

// InFence reports whether the scanner is inside a fenced code block.
func (s *Scanner) InFence() bool { return s.fence != 0 }

// Blocks cuts Markdown into its finished blocks, each with the blank lines that
// follow it, as the page's stream cuts a reply (a terminal renders them one by one, as they
// end); when final, the rest is the last block (blank lines alone are no block). The blocks
// together are a prefix of src (all of it, when final).
func Blocks(src string, final bool) []string {
	var blocks []string
	var sc Scanner
	start := 0
	for off := 0; off < len(src); {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			break // the line is still being written
		}
		for _, cut := range sc.Line(src[off:off+i+1], off) {
			if cut > start {
				blocks = append(blocks, src[start:cut])
				start = cut
			}
		}
		off += i + 1
	}
	if final && strings.TrimSpace(src[start:]) != "" {
		blocks = append(blocks, src[start:])
	} else if final && len(blocks) > 0 {
		blocks[len(blocks)-1] += src[start:]
	}
	return blocks
}

// IndentOf returns a line's indentation in columns (tabs to the next multiple of 4) and the
// line without it.
func IndentOf(line string) (int, string) {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n, line[i:]
		}
	}
	return n, ""
}

// fenceOpen reports the fence a line opens: its character and length, 0 when none.
func fenceOpen(rest string) (byte, int) {
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0
	}
	c := rest[0]
	n := 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.IndexByte(rest[n:], '`') >= 0) {
		return 0, 0
	}
	return c, n
}

func closesFence(rest string, c byte, n int) bool {
	k := 0
	for k < len(rest) && rest[k] == c {
		k++
	}
	return k >= n && strings.TrimSpace(rest[k:]) == ""
}

// listItem reports a line that opens a list item: -, + or * then a space, or 1-9 digits
// then . or ) and a space (or the end of the line).
func listItem(rest string) bool {
	if rest == "" {
		return false
	}
	i := 0
	switch rest[0] {
	case '-', '+', '*':
		i = 1
	default:
		for i < len(rest) && i < 9 && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(rest) || (rest[i] != '.' && rest[i] != ')') {
			return false
		}
		i++
	}
	return i == len(rest) || rest[i] == ' ' || rest[i] == '\t'
}

func atxHeading(rest string) bool {
	i := 0
	for i < len(rest) && rest[i] == '#' {
		i++
	}
	return i >= 1 && i <= 6 && (i == len(rest) || rest[i] == ' ' || rest[i] == '\t')
}

func thematicBreak(rest string) bool {
	var c byte
	n := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ' ', '\t':
		case '-', '*', '_':
			if c != 0 && rest[i] != c {
				return false
			}
			c = rest[i]
			n++
		default:
			return false
		}
	}
	return n >= 3
}
