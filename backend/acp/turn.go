package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/parley-chat/parley/domain"
)

// turn is one prompt of a step: it turns what the agent sends into the conversation. The
// agent's updates come in order on one goroutine, its requests each on one of their own:
// mu keeps the output to one at a time (and is never held while the person answers).
type turn struct {
	a     *Agent
	p     *proc
	ctx   context.Context // the step's, ended too when the process ends
	in    domain.StepInput
	out   domain.Output
	title string

	mu     sync.Mutex
	cp     *checkpoint
	msg    string                      // the id of the agent message being written
	calls  map[string]*domain.ToolCall // by the agent's tool call id
	n      int                         // cards made
	asking map[string]bool             // calls waiting for the person's permission
	err    error                       // the first failure to store what the agent sent
	// Questions in flight, counted so that the step ends only once each is settled (its
	// expiry stored before the run's end): over refuses new ones, idle closes at none.
	inflight int
	over     bool
	idle     chan struct{}
	// last is when the agent last sent anything (see watch).
	last time.Time
}

// touch notes that the agent sent something. Under t.mu.
func (t *turn) touchLocked() { t.last = time.Now() }

// watch calls silent once the agent has sent nothing for idle while no question of the
// turn waits for the person; it ends with the turn.
func (t *turn) watch(idle time.Duration, silent func()) {
	t.mu.Lock()
	t.touchLocked()
	t.mu.Unlock()
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-timer.C:
		}
		t.mu.Lock()
		if t.inflight > 0 {
			t.touchLocked() // the agent waits for the person, not the other way round
		}
		left := idle - time.Since(t.last)
		t.mu.Unlock()
		if left <= 0 {
			silent()
			return
		}
		timer.Reset(left)
	}
}

// hold counts a question in flight; false once the turn is over (the agent is told
// cancelled). Under t.mu.
func (t *turn) holdLocked() bool {
	if t.over {
		return false
	}
	t.inflight++
	return true
}

// unhold ends a question in flight.
func (t *turn) unhold() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inflight--
	if t.inflight == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// settle ends the turn: no question is asked after it, and it returns once those in
// flight are settled. The turn's context must be over, so that they are.
func (t *turn) settle() {
	t.mu.Lock()
	t.over = true
	if t.inflight == 0 {
		t.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	t.idle = idle
	t.mu.Unlock()
	<-idle
}

// keep records the first failure to store.
func (t *turn) keep(err error) {
	if err != nil && t.err == nil {
		t.err = err
	}
}

func (t *turn) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// update shows one update of the session.
func (t *turn) update(u sdk.SessionUpdate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over {
		return // late: the turn's end is written
	}
	t.touchLocked()
	switch {
	case u.AgentMessageChunk != nil:
		c := u.AgentMessageChunk
		if c.MessageId != nil && *c.MessageId != t.msg {
			if t.msg != "" {
				t.keep(t.out.EndMessage())
			}
			t.msg = *c.MessageId
		}
		if text := blockText(c.Content); text != "" {
			t.keep(t.out.Text(text))
		}
	case u.ToolCall != nil:
		c := u.ToolCall
		tc := t.card(string(c.ToolCallId))
		t.apply(tc, sdk.ToolCallUpdate{Title: &c.Title, Kind: &c.Kind, Status: &c.Status, Content: c.Content,
			Locations: c.Locations, RawInput: c.RawInput, RawOutput: c.RawOutput})
		t.show(tc)
	case u.ToolCallUpdate != nil:
		c := u.ToolCallUpdate
		tc := t.card(string(c.ToolCallId))
		t.apply(tc, sdk.ToolCallUpdate{Title: c.Title, Kind: c.Kind, Status: c.Status, Content: c.Content,
			Locations: c.Locations, RawInput: c.RawInput, RawOutput: c.RawOutput})
		t.show(tc)
	case u.Plan != nil:
		plan := domain.Plan{Steps: make([]domain.PlanStep, 0, len(u.Plan.Entries))}
		for _, e := range u.Plan.Entries {
			plan.Steps = append(plan.Steps, domain.PlanStep{Title: e.Content, Status: stepStatus(e.Status)})
		}
		t.keep(t.out.Plan(plan))
	}
	// Thoughts, commands, modes, usage and the like are not shown.
}

// blockText is the text of a content block of a message: text as it is, anything else
// named in a line.
func blockText(b sdk.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.ResourceLink != nil:
		return fmt.Sprintf("[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri)
	case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
		r := b.Resource.Resource.TextResourceContents
		return fmt.Sprintf("\n\n%s:\n\n%s\n", r.Uri, domain.Fence("", r.Text))
	}
	return ""
}

func stepStatus(s sdk.PlanEntryStatus) domain.StepStatus {
	switch s {
	case "completed":
		return domain.StepDone
	case "in_progress":
		return domain.StepInProgress
	}
	return domain.StepPending
}

// card returns the card of the agent's tool call, new if the call is.
func (t *turn) card(id string) *domain.ToolCall {
	if tc, ok := t.calls[id]; ok {
		return tc
	}
	t.n++
	tc := &domain.ToolCall{Key: fmt.Sprintf("%d-%d", t.in.StepID, t.n), ID: id, Status: domain.ToolRunning, Started: time.Now()}
	t.calls[id] = tc
	return tc
}

// apply takes what an update of a call says into its card: fields it leaves out stay.
func (t *turn) apply(tc *domain.ToolCall, u sdk.ToolCallUpdate) {
	if u.Title != nil && *u.Title != "" {
		tc.Tool = *u.Title
	}
	if u.Kind != nil && *u.Kind != "" {
		tc.Kind = string(*u.Kind)
	}
	if u.Locations != nil {
		// A new list: the card's earlier events, on their way to the page, share the old one.
		tc.Locations = make([]string, 0, len(u.Locations))
		for _, l := range u.Locations {
			loc := t.p.root.show(l.Path)
			if l.Line != nil {
				loc += fmt.Sprintf(":%d", *l.Line)
			}
			tc.Locations = append(tc.Locations, loc)
		}
	}
	if u.Content != nil {
		tc.Content = t.content(u.Content)
	}
	if u.RawInput != nil {
		if b, err := json.Marshal(u.RawInput); err == nil {
			tc.Arguments = b
		}
	}
	if u.RawOutput != nil {
		if s, ok := u.RawOutput.(string); ok {
			tc.Result = s
		} else if b, err := json.Marshal(u.RawOutput); err == nil {
			tc.Result = string(b)
		}
	}
	if u.Status != nil && *u.Status != "" && !t.asking[tc.ID] {
		switch *u.Status {
		case sdk.ToolCallStatusCompleted:
			tc.Status = domain.ToolDone
		case sdk.ToolCallStatusFailed:
			if tc.Status != domain.ToolRejected {
				tc.Status = domain.ToolFailed
			}
		default:
			if !tc.Status.Ended() {
				tc.Status = domain.ToolRunning
			}
		}
	}
}

// content turns a call's content into what its card shows: a diff as a unified diff.
func (t *turn) content(cs []sdk.ToolCallContent) []domain.ToolContent {
	out := make([]domain.ToolContent, 0, len(cs))
	for _, c := range cs {
		switch {
		case c.Diff != nil:
			path := t.p.root.show(c.Diff.Path)
			out = append(out, domain.ToolContent{Type: "diff", Name: path, Text: unifiedDiff(path, c.Diff.OldText, c.Diff.NewText)})
		case c.Content != nil:
			b := c.Content.Content
			switch {
			case b.Text != nil:
				out = append(out, domain.ToolContent{Type: "text", Text: b.Text.Text})
			case b.Image != nil:
				out = append(out, domain.ToolContent{Type: "image", MIME: b.Image.MimeType, Data: b.Image.Data})
			case b.ResourceLink != nil:
				l := b.ResourceLink
				tc := domain.ToolContent{Type: "resource_link", URI: l.Uri, Name: l.Name}
				if l.MimeType != nil {
					tc.MIME = *l.MimeType
				}
				out = append(out, tc)
			case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
				r := b.Resource.Resource.TextResourceContents
				out = append(out, domain.ToolContent{Type: "text", URI: r.Uri, Text: r.Text})
			default:
				out = append(out, domain.ToolContent{Type: "unsupported", Text: "Content of a kind Parley does not show."})
			}
		case c.Terminal != nil:
			out = append(out, domain.ToolContent{Type: "unsupported", Text: "A terminal's output (Parley offers the agent no terminal)."})
		}
	}
	return out
}

// show stores the card as it stands.
func (t *turn) show(tc *domain.ToolCall) {
	if tc.Status.Ended() && tc.Took == 0 {
		tc.Took = time.Since(tc.Started)
	}
	t.keep(t.out.Tool(*tc))
	tc.Update = true
}

// wrote shows a file Parley wrote for the agent on the card of the call it belongs to: the
// running call that names the file, else the last running one, else a card of its own.
func (t *turn) wrote(path string, before *string, content string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over {
		return
	}
	t.touchLocked()
	shown := t.p.root.show(path)
	var named, last *domain.ToolCall
	for _, c := range t.calls {
		if c.Status.Ended() {
			continue
		}
		if last == nil || c.Started.After(last.Started) {
			last = c
		}
		if slices.ContainsFunc(c.Locations, func(l string) bool { return l == shown || strings.HasPrefix(l, shown+":") }) &&
			(named == nil || c.Started.After(named.Started)) {
			named = c
		}
	}
	tc := cmp.Or(named, last)
	if tc == nil {
		tc = t.card(fmt.Sprintf("write-%d", t.n+1))
		tc.Tool, tc.Kind, tc.Status, tc.Locations = "Write "+shown, "edit", domain.ToolDone, []string{shown}
	}
	added, removed := diffCounts(before, content)
	tc.Notes = append(tc.Notes, fmt.Sprintf("Parley wrote %s for the agent (+%d −%d lines).", shown, added, removed))
	hasDiff := false
	for _, c := range tc.Content {
		hasDiff = hasDiff || (c.Type == "diff" && c.Name == shown)
	}
	if !hasDiff {
		tc.Content = append(tc.Content, domain.ToolContent{Type: "diff", Name: shown, Text: unifiedDiff(shown, before, content)})
	}
	t.show(tc)
}

// end closes the cards the turn left open: their calls ended with it.
func (t *turn) end(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tc := range t.calls {
		if tc.Status.Ended() {
			continue
		}
		switch reason {
		case string(sdk.StopReasonEndTurn):
			tc.Status = domain.ToolDone
		default:
			tc.Status = domain.ToolFailed
			if reason == "" {
				reason = "the agent's process ended"
			}
			tc.Error = "The call did not finish: " + strings.ReplaceAll(reason, "_", " ") + "."
		}
		tc.Waiting = ""
		t.show(tc)
	}
}
