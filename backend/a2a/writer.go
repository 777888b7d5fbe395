package a2a

import (
	"strings"

	"github.com/parley-chat/parley/domain"
)

// writer streams the agent's current message to the Output. A UserInputMetaData form that
// starts a line is held back and asked as a question (with the task's key) when the message
// ends, so that the runner never sees the form text and a form is never asked twice.
type writer struct {
	out domain.Output
	ask func(domain.Question) error

	msg      strings.Builder
	released int // bytes of msg already given to out.Text
	form     int // where a form starts in msg, -1 while none
	line     int // where the last line of msg starts
	blank    int // where the blanks of the last line, read so far, end
	// last is the text of the last message ended, as the person saw it.
	last string
}

func newWriter(out domain.Output, ask func(domain.Question) error) *writer {
	return &writer{out: out, ask: ask, form: -1}
}

// current is the current message so far, held text included.
func (w *writer) current() string { return w.msg.String() }

// text appends to the current message.
func (w *writer) text(s string) error {
	if s == "" {
		return nil
	}
	added := w.msg.Len()
	w.msg.WriteString(s)
	all := w.msg.String()
	hold := w.scan(all, added)
	limit := len(all)
	if w.form >= 0 {
		limit = w.form
	} else if hold {
		// The last line may still become a form: wait for more.
		limit = w.line
	}
	if limit <= w.released {
		return nil
	}
	chunk := all[w.released:limit]
	w.released = limit
	return w.out.Text(chunk)
}

// scan looks for a form opening the line in progress or a line that starts in all[added:],
// reading each byte once (a reply of any length costs its length), and reports whether the
// last line may still open one.
func (w *writer) scan(all string, added int) (hold bool) {
	for {
		w.blank = domain.LineBlanks(all, max(w.blank, w.line))
		opens, may := domain.OpensUserInputMetaData(all[w.blank:])
		if opens && w.form < 0 {
			w.form = w.blank
		}
		from := max(w.blank, added)
		nl := strings.IndexByte(all[from:], '\n')
		if nl < 0 {
			return may
		}
		w.line = from + nl + 1
		w.blank = w.line
	}
}

// end finishes the current message; a form held back becomes a question, and the text after
// its JSON a message of its own.
func (w *writer) end() error {
	all := w.msg.String()
	released, form := w.released, w.form
	w.msg.Reset()
	w.released, w.form, w.line, w.blank = 0, -1, 0, 0
	if all == "" {
		return nil
	}
	if form >= 0 {
		if q, _, after, ok := domain.SplitUserInputMetaData(all[form:]); ok {
			w.last = all[:form]
			if err := w.out.EndMessage(); err != nil {
				return err
			}
			if err := w.ask(q); err != nil {
				return err
			}
			if after == "" {
				return nil
			}
			w.last = after
			if err := w.out.Text(after); err != nil {
				return err
			}
			return w.out.EndMessage()
		}
	}
	w.last = all
	if held := all[released:]; strings.TrimSpace(held) != "" || (released > 0 && held != "") {
		if err := w.out.Text(held); err != nil {
			return err
		}
	}
	return w.out.EndMessage()
}

// flush gives the Output the text held back, without ending the message (a step cut off
// by shutdown keeps it as partial text).
func (w *writer) flush() error {
	all := w.msg.String()
	if w.released >= len(all) {
		return nil
	}
	held := all[w.released:]
	w.released = len(all)
	return w.out.Text(held)
}

// final ends the current message with the complete text of a result. Text already streamed
// is not repeated: when the result continues it, only the rest is added; when it is something
// else, the streamed text stays a message of its own and the result follows it.
func (w *writer) final(text string) error {
	sofar := w.current()
	switch {
	case strings.TrimSpace(text) == "":
	case sofar == "":
		if err := w.text(text); err != nil {
			return err
		}
	case strings.HasPrefix(text, sofar):
		if err := w.text(text[len(sofar):]); err != nil {
			return err
		}
	case strings.TrimSpace(text) == strings.TrimSpace(sofar):
	default:
		if err := w.end(); err != nil {
			return err
		}
		if err := w.text(text); err != nil {
			return err
		}
	}
	return w.end()
}

// shown reports whether text was shown already, as the current or the last message.
func (w *writer) shown(text string) bool {
	t := strings.TrimSpace(text)
	return t != "" && (strings.Contains(w.current(), t) || strings.Contains(w.last, t))
}
