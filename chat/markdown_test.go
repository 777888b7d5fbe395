package chat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/chat/chattest"
)

const reply = "**Event:** Offsite in *Chicago*.\n\n| Item | Cost |\n| --- | --- |\n| Venue | $1,200 |\n| Food | $800 |\n\n" +
	"- one\n- two\n\n```go\nfunc main() {}\n\n// still code\n```\n\nThat is **all**."

// testSession is a session writing to a buffer, its Markdown rendered as for a terminal
// 100 columns wide when md.
func testSession(md bool) (*session, *strings.Builder) {
	var out strings.Builder
	s := &session{out: &out, errw: &out, sent: map[string]bool{}, ours: map[int64]bool{}, conv: apiConversation{Agent: "fake"}}
	if md {
		s.md = chatMarkdown(true, []string{"TERM=xterm-256color"}, func() int { return 100 })
	}
	return s, &out
}

// stream feeds the session text as deltas of n bytes, then the finished message.
func stream(t *testing.T, s *session, text string, n int) {
	t.Helper()
	event := func(typ string, v any) {
		t.Helper()
		data, _ := json.Marshal(v)
		if err := s.handle(sseEvent{Type: typ, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	for off := 0; off < len(text); off += n {
		event(api.MessageDelta, api.Delta{MessageID: "m1", Author: "fake", Offset: off, Text: text[off:min(off+n, len(text))]})
	}
	event(api.MessageDone, apiMessage{MessageID: "m1", Role: "agent", Author: "fake", Text: text})
}

func TestChat_MarkdownAsItCameWhenNotATerminal(t *testing.T) {
	s, out := testSession(false)
	stream(t, s, reply, 7)
	if got, want := out.String(), "fake> "+reply+"\n"; got != want {
		t.Errorf("output:\n%q\nwant the source as it came:\n%q", got, want)
	}
	s, out = testSession(false)
	s.showMessage(apiMessage{Role: "agent", Author: "fake", Text: reply})
	if got, want := out.String(), "fake> "+reply+"\n"; got != want {
		t.Errorf("a finished message:\n%q\nwant the source as it came:\n%q", got, want)
	}
}

func TestChat_MarkdownRenderedOnATerminal(t *testing.T) {
	s, out := testSession(true)
	s.showMessage(apiMessage{Role: "agent", Author: "fake", Text: reply})
	whole := out.String()
	text := ansi.Strip(whole)
	for _, raw := range []string{"**", "| --- |", "|---", "```"} {
		if strings.Contains(text, raw) {
			t.Errorf("the rendered message shows %q:\n%s", raw, text)
		}
	}
	for _, want := range []string{"fake> Event: Offsite in Chicago.", "Venue", "$1,200", "func main() {}", "// still code", "That is all."} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered message lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(whole, "\x1b[") {
		t.Errorf("no style on a terminal:\n%q", whole)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, " ") || ansi.StringWidth(l) > 100 {
			t.Errorf("line %q is padded or wider than the terminal", l)
		}
	}

	// Streamed in small pieces, it ends as the same screen. (Its styles may differ a little:
	// chroma picks one of two greys as it likes.)
	for _, n := range []int{1, 5, len(reply)} {
		s, out := testSession(true)
		stream(t, s, reply, n)
		if got := ansi.Strip(chattest.Screen(out.String())); got != text {
			t.Errorf("streamed %d bytes at a time, the screen:\n%s\nwant:\n%s", n, got, text)
		}
	}
}

func TestChat_MarkdownStreamsItsBlocksAndALiveLine(t *testing.T) {
	s, out := testSession(true)
	delta := func(off int, text string) {
		t.Helper()
		data, _ := json.Marshal(api.Delta{MessageID: "m1", Author: "fake", Offset: off, Text: text})
		if err := s.handle(sseEvent{Type: api.MessageDelta, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	delta(0, "Hello **there**")
	if got, want := ansiStyle.ReplaceAllString(out.String(), ""), "\r\x1b[Kfake> Hello **there**"; got != want {
		t.Errorf("the live line: %q, want %q", got, want)
	}
	out.Reset()
	delta(15, ".\n\nNext")
	if got, want := ansiStyle.ReplaceAllString(out.String(), ""), "\r\x1b[Kfake> Hello there.\n\r\x1b[K  Next"; got != want {
		t.Errorf("a block finished: %q, want it rendered, then the live line", got)
	}
	out.Reset()
	// The run ends before the message does: what streamed stays, rendered.
	data, _ := json.Marshal(api.RunStateEvent{State: "stopped"})
	s.handle(sseEvent{Type: api.RunState, Data: data})
	if got, want := ansi.Strip(chattest.Screen(out.String())), "\n  Next\n(stopped)\n"; got != want {
		t.Errorf("stopped: %q, want %q", got, want)
	}
}

func TestChatMarkdown_Terminal(t *testing.T) {
	cols := func() int { return 80 }
	for _, tc := range []struct {
		name     string
		terminal bool
		env      []string
		want     bool // rendered
		color    bool
	}{
		{"APipe", false, []string{"TERM=xterm-256color"}, false, false},
		{"ATerminal", true, []string{"TERM=xterm-256color"}, true, true},
		{"ADumbTerminal", true, []string{"TERM=dumb"}, false, false},
		{"NoTERM", true, nil, false, false},
		{"NO_COLOR", true, []string{"TERM=xterm-256color", "NO_COLOR=1"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := chatMarkdown(tc.terminal, tc.env, cols)
			if (md != nil) != tc.want {
				t.Fatalf("rendered = %v, want %v", md != nil, tc.want)
			}
			if md == nil {
				return
			}
			out := strings.Join(md.render("**bold** and `code`"), "\n")
			if got := strings.Contains(out, "38;5;"); got != tc.color {
				t.Errorf("coloured = %v, want %v: %q", got, tc.color, out)
			}
			if got := ansi.Strip(out); strings.Contains(got, "**") || !strings.Contains(got, "bold and") {
				t.Errorf("rendered %q", got)
			}
		})
	}
}

func TestPrintable(t *testing.T) {
	if got, want := printable("a\x1b]0;title\x07b\tc\nd\u009be"), "a]0;titleb\tc\nde"; got != want {
		t.Errorf("printable = %q, want %q", got, want)
	}
}

func TestChatMarkdown_Blocks(t *testing.T) {
	src := "# Plan\n\n| Item | Cost |\n| --- | ---: |\n| Venue, with a note long enough to wrap in its column | $1,200 |\n\n" +
		"1. first\n2. second\n   - nested\n\n- [x] done\n\n> quoted\n\n```\ncode\n```\n\nSee [the docs](https://example.com/docs)."
	dark := chatMarkdown(true, []string{"TERM=xterm-256color"}, func() int { return 40 })
	lines := dark.render(src)
	text := ansi.Strip(strings.Join(lines, "\n"))
	for _, want := range []string{"# Plan", "┌", "│ $1,200 │", "1. first", "     • nested", "• [✓] done", "│ quoted", "    code",
		"https://example.com/docs"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendering lacks %q:\n%s", want, text)
		}
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %q is %d wide, more than the terminal's 40", ansi.Strip(l), w)
		}
	}
	light := chatMarkdown(true, []string{"TERM=xterm-256color", "GLAMOUR_STYLE=light"}, func() int { return 40 })
	if got := light.render(src); ansi.Strip(strings.Join(got, "\n")) != text || slices.Equal(got, lines) {
		t.Errorf("GLAMOUR_STYLE=light: want the same text in other colours")
	}
}
