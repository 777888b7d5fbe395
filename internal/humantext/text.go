package humantext

import (
	"strconv"
	"strings"
)

// Plural counts n of a word: "1 question", "3 questions".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// UnescapeHTMLEscapes turns \u003c, \u003e and \u0026 of JSON text back into <, > and &,
// which are as valid in a JSON string; other escapes (an escaped backslash among them)
// stay as they are.
func UnescapeHTMLEscapes(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch s[i+2 : i+6] {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2])
		i++
	}
	return b.String()
}
