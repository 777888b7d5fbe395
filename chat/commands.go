package chat

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// command runs a line typed at the you> prompt; done reports /quit.
func (s *session) command(line string) (done bool) {
	cmd := strings.TrimSpace(line)
	if cmd == "/edit" || strings.HasPrefix(cmd, "/edit ") {
		s.edit(strings.TrimPrefix(cmd, "/edit"))
		return false
	}
	if cmd == "/good" || cmd == "/bad" || strings.HasPrefix(cmd, "/bad ") {
		s.rate(cmd)
		return false
	}
	switch cmd {
	case "":
		return false
	case "/quit", "/exit":
		return true
	case "/help":
		s.note("Type a message, or /retry (run the failed step again), /regenerate (another answer to your last message), " +
			"/edit TEXT (your last message says TEXT instead; /edit alone lists them), /good or /bad [what was wrong] (your opinion of the last reply), " +
			"/stop, /quit. Ctrl-D at a question declines it.")
	case "/stop":
		if err := s.c.stop(s.ctx, s.conv.ID); err != nil {
			s.problem(err)
		}
	case "/regenerate":
		s.regenerate()
	case "/retry":
		if err := s.c.retry(s.ctx, s.conv.ID); err != nil {
			s.problem(err)
			return false
		}
		s.expect, s.expectRun = true, s.runID
	default:
		if err := s.send(line); err != nil {
			s.notSent(err)
		}
	}
	return false
}

// rate gives the person's opinion of the last reply shown: /good, or /bad with what was
// wrong, if they say.
func (s *session) rate(cmd string) {
	var last int64
	for _, m := range s.transcript {
		if m.MessageID != "" && m.EventID != 0 {
			last = m.EventID
		}
	}
	if last == 0 {
		s.note("There is no reply to rate yet.")
		return
	}
	rating, comment := "good", ""
	if strings.HasPrefix(cmd, "/bad") {
		rating, comment = "bad", strings.TrimSpace(strings.TrimPrefix(cmd, "/bad"))
	}
	if err := s.c.rate(s.ctx, s.conv.ID, last, rating, comment); err != nil {
		s.problem(err)
		return
	}
	s.note(fmt.Sprintf("Thank you: the last reply is rated %s.", rating))
}

// notSent reports a message the server refused; when no person is there to see it and
// try again, it makes the exit code 1.
func (s *session) notSent(err error) {
	s.problem(fmt.Errorf("not sent: %w", err))
	if !s.tty {
		s.unsent++
	}
}

// send posts a message to the conversation.
func (s *session) send(text string) error {
	if !s.tty {
		s.line("you> " + text)
	}
	key := domain.NewNonce()
	s.sent[key] = true
	if err := s.c.sendMessage(s.ctx, s.conv.ID, text, key); err != nil {
		delete(s.sent, key)
		return err
	}
	s.expect, s.expectRun = true, s.runID
	return nil
}

// busy reports whether the agent is working (or about to), so the next message must wait.
func (s *session) busy() bool {
	return s.expect || s.state == "running" || s.state == "waiting"
}

// waitEvent handles the next event, or Ctrl-C while the agent works.
func (s *session) waitEvent() error {
	select {
	case ev := <-s.events:
		return s.handle(ev)
	case sig := <-s.sigs:
		return s.interrupt(sig, true)
	}
}

// interrupt handles a signal: the first Ctrl-C while the agent works stops it; any other
// quits.
func (s *session) interrupt(sig os.Signal, working bool) error {
	if sig != os.Interrupt {
		return errTerminate
	}
	if !working || time.Since(s.lastInterrupt) < 2*time.Second {
		return errInterrupt
	}
	s.lastInterrupt = time.Now()
	s.note("Stopping the agent (Ctrl-C again to quit)…")
	if err := s.c.stop(s.ctx, s.conv.ID); err != nil {
		s.problem(err)
	}
	return nil
}
