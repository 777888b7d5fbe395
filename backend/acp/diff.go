package acp

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// maxDiffCells bounds the table a diff fills (lines before × lines after, once the common
// head and tail are set aside): past it, the changed middle is shown as removed and added.
const maxDiffCells = 4 << 20

// op is one line of an edit script: ' ' kept, '-' removed, '+' added.
type op struct {
	kind byte
	line string
}

// unifiedDiff shows the change of the file at path from old (nil: it did not exist) to
// new as a unified diff.
func unifiedDiff(path string, old *string, new string) string {
	from := "a/" + path
	var a []string
	if old == nil {
		from = "/dev/null"
	} else {
		a = lines(*old)
	}
	ops := editScript(a, lines(new))
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ b/%s\n", from, path)
	for start := 0; start < len(ops); {
		// The next change, with its context, and the changes near enough to share it.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		lo := max(first-diffContext, start)
		hi := first
		for i := first; i < len(ops); i++ {
			if ops[i].kind != ' ' {
				hi = i + 1
			} else if i-hi >= 2*diffContext {
				break
			}
		}
		end := min(hi+diffContext, len(ops))
		oldLine, newLine := 1, 1
		for _, o := range ops[:lo] {
			if o.kind != '+' {
				oldLine++
			}
			if o.kind != '-' {
				newLine++
			}
		}
		oldN, newN := 0, 0
		for _, o := range ops[lo:end] {
			if o.kind != '+' {
				oldN++
			}
			if o.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(oldLine, oldN), hunkRange(newLine, newN))
		for _, o := range ops[lo:end] {
			b.WriteByte(o.kind)
			b.WriteString(o.line)
			b.WriteByte('\n')
		}
		start = end
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// hunkRange writes a hunk's start and length as unified diffs do.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// diffCounts counts the lines added and removed from before (nil: no file) to after.
func diffCounts(before *string, after string) (added, removed int) {
	var a []string
	if before != nil {
		a = lines(*before)
	}
	for _, o := range editScript(a, lines(after)) {
		switch o.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// editScript turns a into b: the common head and tail kept, the middle by a longest common
// subsequence of lines.
func editScript(a, b []string) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]op, 0, len(a)+len(b))
	for _, l := range a[:head] {
		ops = append(ops, op{' ', l})
	}
	ops = append(ops, middle(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for _, l := range a[len(a)-tail:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

func middle(a, b []string) []op {
	var ops []op
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			ops = append(ops, op{'-', l})
		}
		for _, l := range b {
			ops = append(ops, op{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, op{'-', a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, op{'+', b[j]})
	}
	return ops
}
