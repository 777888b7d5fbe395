package acp

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiffShowsTheChangeWithItsContext(t *testing.T) {
	var old, changed []string
	for i := 1; i <= 20; i++ {
		old = append(old, fmt.Sprintf("line %d", i))
	}
	changed = append(changed, old...)
	changed[9] = "line ten"                       // a change in the middle
	changed = append(changed[:2], changed[3:]...) // a line removed near the top
	changed = append(changed, "line 21")          // one added at the end
	before := strings.Join(old, "\n") + "\n"
	got := unifiedDiff("src/a.txt", &before, strings.Join(changed, "\n")+"\n")
	want := `--- a/src/a.txt
+++ b/src/a.txt
@@ -1,13 +1,12 @@
 line 1
 line 2
-line 3
 line 4
 line 5
 line 6
 line 7
 line 8
 line 9
-line 10
+line ten
 line 11
 line 12
 line 13
@@ -18,3 +17,4 @@
 line 18
 line 19
 line 20
+line 21`
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if a, r := diffCounts(&before, strings.Join(changed, "\n")+"\n"); a != 2 || r != 2 {
		t.Errorf("counts +%d −%d, want +2 −2", a, r)
	}
}

func TestUnifiedDiffOfANewFile(t *testing.T) {
	got := unifiedDiff("notes.txt", nil, "hello\nworld\n")
	want := "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+hello\n+world"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}

func TestUnifiedDiffOfHugeFilesStaysBounded(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	before := a.String()
	got := unifiedDiff("big.txt", &before, b.String())
	if n := strings.Count(got, "\n-a"); n != 5000 {
		t.Errorf("removed lines = %d, want 5000", n)
	}
	if n := strings.Count(got, "\n+b"); n != 5000 {
		t.Errorf("added lines = %d, want 5000", n)
	}
}
