package acp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/parley-chat/parley/domain"
)

// cancelWait is how long a cancelled turn waits for the agent to answer its prompt (with
// stop reason cancelled, as ACP asks) before its process is ended.
const cancelWait = 2 * time.Second

// maxEarlier bounds the earlier conversation a new session is given when the old one is gone.
const maxEarlier = 16 << 10

// checkpoint is what a conversation keeps of its agent between steps.
type checkpoint struct {
	// Session is the ACP session the conversation's process serves.
	Session string `json:"session,omitempty"`
	// Rules are the "always" answers the person gave in the session.
	Rules []rule `json:"rules,omitempty"`
}

// rule is an "always" answer to a permission request: later requests of the session with
// the same Key get the option of the same Kind without asking.
type rule struct {
	Key  string `json:"key"`
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Step sends the person's message (the messages sent together from the queue) as a prompt
// of the conversation's session and
// streams the turn into the conversation until the agent ends it.
func (a *Agent) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	title := a.Info().Title
	msgs, earlier := prompt(in.History)
	if len(msgs) == 0 {
		return domain.Faultf(title, nil, "there is no message to send")
	}
	var cp checkpoint
	if _, err := domain.LastCheckpoint(in.History, &cp); err != nil {
		a.log.Warn("unreadable checkpoint; starting afresh", "conversation", in.ConversationID, "error", err)
		cp = checkpoint{}
	}
	root, err := a.workspace(in.Person)
	if err != nil {
		return domain.Faultf(title, err, "%v", err)
	}
	wait := a.waiting(in, out)
	p, err := a.acquire(ctx, in.ConversationID, root, wait.show)
	wait.end(err)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return domain.Faultf(title, err, "could not start the agent: %v", err)
	}
	defer a.release(p)
	// The turn ends with the step, or with the process.
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-p.exited:
			cancel(p.why)
		case <-tctx.Done():
		}
	}()
	fresh, err := a.open(tctx, p, &cp, in.StepID, out)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return domain.Faultf(title, err, "%v", err)
	}
	var blocks []sdk.ContentBlock
	for _, m := range msgs {
		blocks = append(blocks, a.message(ctx, in, p.caps.PromptCapabilities, m)...)
	}
	if fresh && earlier != "" {
		// The conversation so far first, as context; the message last, as its own block.
		blocks = append([]sdk.ContentBlock{sdk.TextBlock("(Parley: this conversation began in an earlier session of yours, which has ended. " +
			"What was said there, oldest first:)\n\n" + earlier + "\n\n(The person's new message follows.)")}, blocks...)
	}
	t := &turn{a: a, p: p, ctx: tctx, in: in, out: out, cp: &cp, title: title, calls: map[string]*domain.ToolCall{}}
	p.setTurn(t)
	defer p.setTurn(nil)
	// Whatever ends the turn, its questions still waiting expire first (as the live
	// questions they are, before the run ends), then its open cards close, saying why.
	ended := "the agent's process ended"
	defer func() {
		cancel(errTurnOver)
		t.settle()
		t.end(ended)
	}()

	// A turn the agent leaves silent for IdleTimeout (while no question of it waits for
	// the person) is cancelled: an agent stuck on a network it cannot reach, say.
	silent := fmt.Errorf("the agent sent nothing for %s", a.cfg.IdleTimeout)
	if a.cfg.IdleTimeout > 0 {
		go t.watch(a.cfg.IdleTimeout, func() { cancel(silent) })
	}

	type result struct {
		res sdk.PromptResponse
		err error
	}
	done := make(chan result, 1)
	session := p.sessionID()
	go func() {
		// Not cut off by the step's end: a stop is a session/cancel, which the agent answers.
		r, err := p.conn.Prompt(context.WithoutCancel(tctx), sdk.PromptRequest{SessionId: sdk.SessionId(session), Prompt: blocks})
		done <- result{r, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-tctx.Done():
		if p.dead() {
			return domain.Faultf(title, p.why, "%v", p.why)
		}
		// A stop, a new message, Parley's shutdown: the turn is cancelled as ACP says, and
		// the agent answers its prompt. One that does not within cancelWait (or does not
		// even read the cancel) has its process ended.
		ended = "the turn was stopped"
		if errors.Is(context.Cause(tctx), silent) {
			ended = silent.Error()
		}
		go func() {
			_ = p.conn.Cancel(context.WithoutCancel(tctx), sdk.CancelNotification{SessionId: sdk.SessionId(session)})
		}()
		select {
		case <-done:
		case <-p.exited:
		case <-time.After(cancelWait):
			a.log.Warn("the coding agent did not end its turn when cancelled; ending its process", "conversation", in.ConversationID)
			p.kill()
		}
		if ctx.Err() == nil && errors.Is(context.Cause(tctx), silent) {
			return domain.Faultf(title, silent, "%v; its turn was cancelled", silent)
		}
		return context.Cause(ctx)
	}
	if r.err != nil {
		if p.ended() {
			return domain.Faultf(title, p.why, "%v", p.why)
		}
		err := rpcError(r.err)
		ended = "the agent's turn failed"
		return domain.Faultf(title, r.err, "%v", err)
	}
	reason := r.res.StopReason
	ended = string(reason)
	if err := t.failure(); err != nil {
		return err
	}
	switch reason {
	case sdk.StopReasonEndTurn, "":
		return nil
	case sdk.StopReasonCancelled:
		return domain.Faultf(title, nil, "the agent cancelled its turn")
	case sdk.StopReasonRefusal:
		return domain.Faultf(title, nil, "the agent refused to go on")
	case sdk.StopReasonMaxTokens:
		return domain.Faultf(title, nil, "the agent stopped: its model reached its token limit")
	case sdk.StopReasonMaxTurnRequests:
		return domain.Faultf(title, nil, "the agent stopped: it reached its limit of model requests for one turn")
	}
	return domain.Faultf(title, nil, "the agent ended its turn for a reason Parley does not know (%q)", reason)
}

// prompt returns the person's messages of the run (one, or several sent together from the
// queue), and what was said before them, for a session that starts afresh in a
// conversation already under way.
func prompt(history []domain.Event) (msgs []*domain.Event, earlier string) {
	last := -1
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Kind == domain.EventUserMessage {
			last = i
			break
		}
	}
	if last < 0 {
		return nil, ""
	}
	first := last
	for i := range history[:last] {
		if ev := history[i]; ev.Kind == domain.EventUserMessage && ev.RunID == history[last].RunID {
			first = i
			break
		}
	}
	for i := first; i <= last; i++ {
		if history[i].Kind == domain.EventUserMessage {
			msgs = append(msgs, &history[i])
		}
	}
	var b strings.Builder
	for _, ev := range history[:first] {
		switch ev.Kind {
		case domain.EventUserMessage:
			fmt.Fprintf(&b, "Person: %s\n\n", ev.Text)
		case domain.EventAgentMessage:
			if strings.TrimSpace(ev.Text) != "" {
				fmt.Fprintf(&b, "You: %s\n\n", ev.Text)
			}
		}
	}
	earlier = strings.TrimSpace(b.String())
	if len(earlier) > maxEarlier {
		earlier = "…" + earlier[len(earlier)-maxEarlier:]
	}
	return msgs, earlier
}

// maxAttached bounds the files of one message given to the agent, in all.
const maxAttached = 4 << 20

// message is the person's message as the agent's prompt: its text (whole: intake's split is
// for agents that read documents through Parley), then each file attached to it, as the
// agent takes it: text as an embedded resource (or in a fenced block, for an agent that
// takes no embedded context), an image as an image. A file it cannot take is named, saying why.
func (a *Agent) message(ctx context.Context, in domain.StepInput, caps sdk.PromptCapabilities, msg *domain.Event) []sdk.ContentBlock {
	var blocks []sdk.ContentBlock
	if strings.TrimSpace(msg.Text) != "" {
		blocks = append(blocks, sdk.TextBlock(msg.Text))
	}
	budget := maxAttached
	for _, ref := range msg.Documents {
		if ref.Label != domain.LabelUpload {
			continue // intake's blocks: their text is in the message's
		}
		skip := func(why string) {
			blocks = append(blocks, sdk.TextBlock(fmt.Sprintf("(The person attached %s, %s, which Parley did not pass on: %s.)", ref.Name, ref.SizeLabel(), why)))
		}
		if ref.Size > int64(budget) {
			skip("the files of one message are limited to 4 MiB in all")
			continue
		}
		var d domain.Document
		var err error
		if in.Documents != nil {
			d, err = in.Documents.Document(ctx, ref.ID)
		}
		switch {
		case in.Documents == nil || err != nil:
			skip("it could not be read")
			continue
		case ref.IsText() && caps.EmbeddedContext:
			blocks = append(blocks, sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{
				Uri: "file:///attachments/" + url.PathEscape(ref.Name), MimeType: sdk.Ptr(ref.MimeType), Text: string(d.Content)}}))
		case ref.IsText():
			blocks = append(blocks, sdk.TextBlock(fmt.Sprintf("The person attached %s:\n\n%s", ref.Name, domain.Fence("", string(d.Content)))))
		case strings.HasPrefix(ref.MimeType, "image/") && caps.Image:
			blocks = append(blocks, sdk.ImageBlock(base64.StdEncoding.EncodeToString(d.Content), ref.MimeType))
		default:
			skip("the agent takes no files of this type")
			continue
		}
		budget -= int(ref.Size)
	}
	if len(blocks) == 0 {
		blocks = append(blocks, sdk.TextBlock("(An empty message.)"))
	}
	return blocks
}

// waiter shows, on a card of its own, that a step waits for a process of the agent.
type waiter struct {
	in    domain.StepInput
	out   domain.Output
	card  domain.ToolCall
	shown bool
}

func (a *Agent) waiting(in domain.StepInput, out domain.Output) *waiter {
	return &waiter{in: in, out: out}
}

// show shows the card, saying what the step waits for.
func (w *waiter) show(what string) {
	w.card = domain.ToolCall{Key: fmt.Sprintf("%d-wait", w.in.StepID), Tool: "Waiting for the agent", Kind: "other",
		Status: domain.ToolWaiting, Waiting: what, Started: time.Now()}
	w.shown = true
	_ = w.out.Tool(w.card)
}

// end closes the card, if it was shown, once the wait is over (err: it ended without a process).
func (w *waiter) end(err error) {
	if !w.shown {
		return
	}
	w.card.Update, w.card.Waiting, w.card.Took = true, "", time.Since(w.card.Started)
	w.card.Status = domain.ToolDone
	if err != nil {
		w.card.Status, w.card.Error = domain.ToolFailed, "The wait ended: "+err.Error()
	}
	_ = w.out.Tool(w.card)
}

// open gives the process its session, once: the conversation's old one loaded where the
// agent can, else a new one. fresh reports a new session in a conversation that had one.
func (a *Agent) open(ctx context.Context, p *proc, cp *checkpoint, step int64, out domain.Output) (fresh bool, err error) {
	if p.sessionID() != "" {
		return false, nil
	}
	// An agent that does not answer (one stuck on a network it cannot reach, say) is ended:
	// the next message starts another.
	slow := fmt.Errorf("the agent did not open a session within %s", a.cfg.StartTimeout)
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.StartTimeout, slow)
	defer cancel()
	defer func() {
		if err != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), slow) {
			p.kill()
		}
	}()
	var why string
	if cp.Session != "" {
		why = "the agent cannot load a session"
		if p.caps.LoadSession {
			_, err := call(ctx, p, func(ctx context.Context) (sdk.LoadSessionResponse, error) {
				return p.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(cp.Session), Cwd: p.root.dir, McpServers: []sdk.McpServer{}})
			})
			if err == nil {
				p.setSession(cp.Session)
				return false, nil
			}
			if ctx.Err() != nil {
				return false, context.Cause(ctx)
			}
			why = "the agent could not load it: " + err.Error()
			a.log.Info("could not load the conversation's session; starting a new one", "session", cp.Session, "error", err)
		}
	}
	res, err := call(ctx, p, func(ctx context.Context) (sdk.NewSessionResponse, error) {
		return p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: p.root.dir, McpServers: []sdk.McpServer{}})
	})
	if err != nil {
		return false, fmt.Errorf("could not start a session: %w", err)
	}
	p.setSession(string(res.SessionId))
	fresh = cp.Session != ""
	*cp = checkpoint{Session: string(res.SessionId)}
	if err := out.Checkpoint(cp); err != nil {
		return false, err
	}
	if fresh {
		now := time.Now()
		_ = out.Tool(domain.ToolCall{Key: fmt.Sprintf("%d-session", step), Tool: "New session", Kind: "other",
			Status: domain.ToolDone, Started: now,
			Notes: []string{"The agent's earlier session ended (" + why + "). This one starts afresh; the agent is given the conversation so far."}})
	}
	return fresh, nil
}

func (p *proc) sessionID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.session
}

func (p *proc) setSession(id string) {
	p.mu.Lock()
	p.session = id
	p.mu.Unlock()
}

// errTurnOver ends a turn's context once the agent's prompt has been answered.
var errTurnOver = errors.New("the agent's turn is over")
