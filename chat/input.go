package chat

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
)

// isTerminal reports whether f is a terminal: a character device other than the null
// device (which reads as a permanent end of input, as a pipe would).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}

// readLines reads lines on a goroutine, so that a prompt can give way to an event (the
// question answered in the browser). On a terminal EOF (Ctrl-D) is sent and reading goes
// on; otherwise EOF closes the channel: the input is over.
func readLines(r io.Reader, tty bool) <-chan inputLine {
	ch := make(chan inputLine)
	go func() {
		br := bufio.NewReader(r)
		for {
			s, err := br.ReadString('\n')
			if err == nil {
				ch <- inputLine{text: strings.TrimRight(s, "\r\n")}
				continue
			}
			if s != "" {
				ch <- inputLine{text: strings.TrimRight(s, "\r")}
			}
			if !tty || !errors.Is(err, io.EOF) {
				close(ch)
				return
			}
			ch <- inputLine{eof: true}
		}
	}()
	return ch
}

// inputLine is a line read from standard input, or an EOF on a terminal.
type inputLine struct {
	text string
	eof  bool
}

// readLine draws the prompt (on a terminal) and waits for a line, handling the events that
// come meanwhile. It gives way with errResolved when the question being asked is resolved
// elsewhere, with errWake when a question or a run comes at the you> prompt, and io.EOF at
// the end of input (Ctrl-D on a terminal).
func (s *session) readLine(prompt string) (string, error) {
	s.drawPrompt(prompt)
	defer func() { s.prompt, s.promptShown = "", false }()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				if !s.inputOver {
					s.inputOver = true
					for _, q := range s.pending {
						s.declineAtEnd = append(s.declineAtEnd, q.ID)
					}
				}
				s.endPrompt()
				return "", io.EOF
			}
			if l.eof {
				s.endPrompt()
				return "", io.EOF
			}
			s.promptShown = false
			return l.text, nil
		case ev := <-s.events:
			if err := s.handle(ev); err != nil {
				return "", err
			}
			if s.asking != 0 && s.resolvedAsking {
				return "", errResolved
			}
			if s.atYou && (len(s.pending) > 0 || s.busy()) {
				s.endPrompt()
				return "", errWake
			}
			if s.prompt != "" && !s.promptShown && !s.midLine && !s.liveShown {
				s.drawPrompt(s.prompt)
			}
		case sig := <-s.sigs:
			s.endPrompt()
			return "", s.interrupt(sig, false)
		}
	}
}

// errWake says the you> prompt gives way: a question came, or a run started elsewhere.
var errWake = errors.New("the you> prompt gives way")

// endPrompt ends the prompt's line where the terminal did not (Ctrl-D, Ctrl-C).
func (s *session) endPrompt() {
	if s.promptShown {
		io.WriteString(s.out, "\n")
		s.promptShown = false
	}
}
