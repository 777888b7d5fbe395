package builtin

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/parley-chat/parley/domain"
)

// speaker streams whole messages through an Output one token at a time, at the agent's pace.
type speaker struct {
	ctx  context.Context
	out  domain.Output
	pace time.Duration
}

// say streams text as one message by author and finishes it.
func (s speaker) say(author, text string) error {
	if author != "" {
		s.out.As(author)
	}
	if err := s.stream(strings.TrimRightFunc(text, unicode.IsSpace)); err != nil {
		return err
	}
	return s.out.EndMessage()
}

// stream sends text token by token, pausing between tokens; it stops when ctx is done.
func (s speaker) stream(text string) error {
	for i, tok := range tokens(text) {
		if i > 0 && s.pace > 0 {
			t := time.NewTimer(s.pace)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return s.ctx.Err()
			case <-t.C:
			}
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if err := s.out.Text(tok); err != nil {
			return err
		}
	}
	return nil
}

// tokens splits text into words, each carrying the spaces and newlines that follow it, so
// that joining the tokens gives the text back unchanged. Leading space is a token of its own.
func tokens(text string) []string {
	var out []string
	start, inSpace := 0, true
	for i, r := range text {
		space := unicode.IsSpace(r)
		if !space && inSpace && i > start {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
