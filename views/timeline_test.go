package views

import "testing"

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"**Approve:** Deploy build 1432 to production\n\nIt carries the new flow.": "Approve: Deploy build 1432 to production",
		"  Which venue?  \nMore.":                          "Which venue?",
		"Use `make test` & [the guide](https://x.example)": "Use make test & the guide",
		"# Plan the summer party":                          "Plan the summer party",
		"<script>alert(1)</script> 2 < 3":                  "<script>alert(1)</script> 2 < 3",
		"- first\n- second":                                "- first",
		"```go\nfmt.Println()\n```":                        "```go",
	} {
		if got := firstLine(in); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
