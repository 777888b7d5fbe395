// Package chattest holds what the tests of parley chat share, in package chat and in the
// tests that run it against a server (cmd/parley).
package chattest

import "strings"

// Screen is what a terminal shows of out: a line redrawn in place (\r, erase line) shows
// what was drawn last.
func Screen(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if j := strings.LastIndex(l, "\r\x1b[K"); j >= 0 {
			lines[i] = l[j+len("\r\x1b[K"):]
		}
	}
	return strings.Join(lines, "\n")
}
