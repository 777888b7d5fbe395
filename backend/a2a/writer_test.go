package a2a

import (
	"strconv"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// textOut is an Output that keeps the text shown and the messages ended.
type textOut struct {
	domain.Output
	shown strings.Builder
	ended []string
}

func (o *textOut) Text(s string) error { o.shown.WriteString(s); return nil }

func (o *textOut) EndMessage() error {
	o.ended = append(o.ended, o.shown.String())
	o.shown.Reset()
	return nil
}

// Whatever pieces a reply arrives in, the text before a form that opens a line streams, the
// form is held back and asked once, and the text after it is a message of its own; a line
// that only mentions the prefix streams.
func TestWriter_FormAtAnyCut(t *testing.T) {
	form := `UserInputMetaData: {"require_user_input": true, "content": "Which branch?", "metadata": {"input_fields": [{"name": "branch", "type": "text", "required": true}]}}`
	reply := "Mentions UserInputMetaData: inline.\nSecond line.\n  " + strings.ToLower(form[:9]) + form[9:] + "\nAfter the form."
	for size := 1; size <= len(reply); size++ {
		out := &textOut{}
		var asked []domain.Question
		w := newWriter(out, func(q domain.Question) error { asked = append(asked, q); return nil })
		for rest := reply; rest != ""; {
			n := min(size, len(rest))
			if err := w.text(rest[:n]); err != nil {
				t.Fatal(err)
			}
			if shown := out.shown.String(); strings.Contains(strings.ToLower(shown), "which branch") {
				t.Fatalf("pieces of %d: the form streamed: %q", size, shown)
			}
			rest = rest[n:]
		}
		if err := w.end(); err != nil {
			t.Fatal(err)
		}
		want := []string{"Mentions UserInputMetaData: inline.\nSecond line.\n  ", "After the form."}
		if len(asked) != 1 || asked[0].Message != "Which branch?" || strings.Join(out.ended, "|") != strings.Join(want, "|") {
			t.Fatalf("pieces of %d: asked %+v, messages %q", size, asked, out.ended)
		}
	}
}

// BenchmarkWriter_Token is the A2A back end's work per piece of a long streamed reply: it
// stays the same however long the reply grows (it read the whole text at every piece), for
// words and for a model stuck writing blank lines.
func BenchmarkWriter_Token(b *testing.B) {
	for _, words := range []bool{true, false} {
		for _, n := range []int{1000, 20000} {
			name := "pieces=" + strconv.Itoa(n)
			if !words {
				name = "blank-" + name
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					w := newWriter(&textOut{}, func(domain.Question) error { return nil })
					for i := range n {
						piece := "word "
						switch {
						case !words && i%2 == 0:
							piece = " "
						case !words:
							piece = "\n"
						case i%40 == 39:
							piece = "word\n"
						}
						w.text(piece)
					}
					w.end()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/piece")
			})
		}
	}
}
