package builtin

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// longestRun is the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// code writes s as inline code that its own backticks cannot end; "" stays "".
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// quote writes text as a Markdown block quote, line by line.
func quote(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+strings.TrimRight(l, "\r"), " ")
	}
	return strings.Join(lines, "\n")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// valueTable is a two-column Markdown table; a pipe in a value cannot break its row.
func valueTable(rows [][2]string) string {
	var b strings.Builder
	b.WriteString("| Field | Value |\n| --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], strings.ReplaceAll(oneLine(r[1]), "|", `\|`))
	}
	return b.String()
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
