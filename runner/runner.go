package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Runner drives agents: it runs queued steps, stores everything they report, and resumes them
// when their questions are resolved. A waiting agent holds no goroutine: the ledger holds it.
//
// What a step writes shows at once through the Hub; the ledger gets it in batches (every
// FlushEvery, sooner past FlushBytes), and whole when the message ends. Everything a person
// or an agent decides (messages, questions, answers, run states) is committed before the
// call that made it returns.
type Runner struct {
	ledger    domain.Ledger
	hub       *Hub
	watch     *Watch
	agents    map[string]domain.Agent
	analyzer  domain.Analyzer
	analyzers map[string]domain.Analyzer
	policies  map[string]domain.Policy
	looks     map[string]domain.Presentation
	// notify wakes whoever delivers word of questions (a question routed to approvers).
	notify func()
	log    *slog.Logger
	now    func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}

	mu      sync.Mutex // guards stopped, wg.Add, running, unsettled, outputs and waiters
	stopped bool
	// waiters are the running steps that wait for a live question, by question id.
	waiters map[int64]chan domain.Resolution
	wg      sync.WaitGroup
	running map[int64]*activeStep // by conversation
	// unsettled are the steps whose end could not be written, by conversation.
	unsettled map[int64]*unsettledStep
	outputs   map[*domain.StepOutput]int64 // the outputs of running steps, with their conversation

	flushEvery time.Duration
	flushBytes int64
	unflushed  atomic.Int64 // bytes written live since the last flush
	flushNow   chan struct{}
}

// activeStep is a step dispatched and not yet finished: cancel stops it, done closes when
// its bookkeeping is over.
type activeStep struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Options configures New.
type Options struct {
	Ledger domain.Ledger
	Agents []domain.Agent
	Logger *slog.Logger
	Now    func() time.Time
	// Analyzer analyzes the first message of each round for agents without one of their own
	// in Analyzers (by agent name). Without either, messages reach agents untouched.
	Analyzer  domain.Analyzer
	Analyzers map[string]domain.Analyzer
	// Policies say, by agent name, who may use each agent and whom its approval gates go
	// to; an agent without one is everyone's, and its gates go to the conversation's owner.
	Policies map[string]domain.Policy
	// Looks are how the pages present agents (domain.Presentation), by agent name.
	Looks map[string]domain.Presentation
	// FlushEvery is how often text being written is stored (default 100 ms); FlushBytes
	// stores it sooner once that much is waiting (default 256 KiB).
	FlushEvery time.Duration
	FlushBytes int64
}

// New returns a Runner; call Start to recover and run pending work. It observes the
// ledger's commits to feed its Hub.
func New(opts Options) *Runner {
	r := &Runner{ledger: opts.Ledger, hub: NewHub(), agents: map[string]domain.Agent{}, log: opts.Logger, now: opts.Now,
		analyzer: opts.Analyzer, analyzers: opts.Analyzers, policies: opts.Policies, looks: opts.Looks,
		wake: make(chan struct{}, 1), running: map[int64]*activeStep{}, unsettled: map[int64]*unsettledStep{}, outputs: map[*domain.StepOutput]int64{}, waiters: map[int64]chan domain.Resolution{},
		flushEvery: opts.FlushEvery, flushBytes: opts.FlushBytes, flushNow: make(chan struct{}, 1)}
	for _, a := range opts.Agents {
		r.agents[a.Info().Name] = a
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.flushEvery <= 0 {
		r.flushEvery = 100 * time.Millisecond
	}
	if r.flushBytes <= 0 {
		r.flushBytes = 256 << 10
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.watch = NewWatch(r.ctx, func(ctx context.Context, id int64) (int64, bool, error) {
		c, err := r.ledger.Conversation(ctx, id)
		return c.UserID, c.Inbound(), err // an inbound question may be a group's
	}, r.ledger.Audience)
	r.ledger.Observe(func(evs []domain.Event) {
		r.hub.Publish(evs)
		r.watch.Publish(evs)
	})
	r.ledger.ObserveRemote(domain.Remote{Drafts: r.liveDrafts, Changed: r.watch.Changed, Gone: func(conv, account int64) {
		r.hub.Gone(conv)
		r.watch.Forget(conv, account)
	}})
	return r
}

// Hub is where the conversations' events and live text can be followed.
func (r *Runner) Hub() *Hub { return r.hub }

// Watch is where people's pages learn that their conversations changed.
func (r *Runner) Watch() *Watch { return r.watch }

// Agents lists the agents people can talk to, by title.
func (r *Runner) Agents() []domain.Info {
	out := make([]domain.Info, 0, len(r.agents))
	for _, a := range r.agents {
		out = append(out, r.info(a))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Title < out[j].Title })
	return out
}

// Agent returns the named agent's description.
func (r *Runner) Agent(name string) (domain.Info, bool) {
	a, ok := r.agents[name]
	if !ok {
		return domain.Info{}, false
	}
	return r.info(a), true
}

// info is an agent's Info as the pages present it (see Options.Looks).
func (r *Runner) info(a domain.Agent) domain.Info {
	info := a.Info()
	if l, ok := r.looks[info.Name]; ok {
		info.Kind = cmp.Or(info.Kind, l.Kind, "openai")
		info.Icon = cmp.Or(l.Icon, info.Icon)
		if len(l.Starters) > 0 {
			info.Starters = l.Starters
		}
	}
	return info
}

// Start interrupts steps a crash cut off, runs the queued ones and starts the deadline timer
// and the flusher of text being written.
func (r *Runner) Start(ctx context.Context) error {
	registered := time.Now() // the lease holds from here (see renew)
	queued, err := r.ledger.Recover(ctx)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	if err := r.expireLive(ctx); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	for _, q := range queued {
		r.dispatch(q.ConversationID, q.ID)
	}
	for name, a := range r.agents {
		if ra, ok := a.(domain.Reattacher); !ok || !ra.Reattaches() {
			continue
		}
		ids, err := r.ledger.InterruptedConversations(ctx, name)
		if err != nil {
			return fmt.Errorf("recover: %w", err)
		}
		for _, id := range ids {
			if err := r.Retry(ctx, id); err != nil {
				r.log.Error("reattach", "conversation", id, "agent", name, "error", err)
			}
		}
	}
	r.mu.Lock()
	r.wg.Add(2)
	every := r.ledger.RenewEvery()
	if every > 0 {
		r.wg.Add(1)
		r.hub.OnFollow(r.followedElsewhere) // other instances write too
	}
	r.mu.Unlock()
	go r.deadlines()
	go r.flusher()
	if every > 0 {
		go r.renew(every, registered)
	}
	return nil
}

// Stop cancels running steps (they are marked interrupted, partial text kept) and waits for them.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewConversation creates a conversation of the message's user with the named agent and
// sends the first message. The nonce makes a double-submitted start form create one
// conversation.
func (r *Runner) NewConversation(ctx context.Context, agentName string, m domain.Message) (domain.Conversation, error) {
	if err := r.mayStart(ctx, m.UserID, agentName); err != nil {
		return domain.Conversation{}, err
	}
	m.Text = domain.NormalizeNewlines(m.Text)
	if err := checkMessage(m); err != nil {
		return domain.Conversation{}, err
	}
	title := m.Text
	if strings.TrimSpace(title) == "" {
		title = m.Files[0].Name
	}
	c, err := r.ledger.CreateConversation(ctx, m.UserID, agentName, domain.Title(title), m.Nonce)
	if err != nil {
		return c, err
	}
	_, err = r.Send(ctx, c.ID, m)
	return c, err
}

func checkMessage(m domain.Message) error {
	if len(strings.TrimSpace(m.Text)) == 0 && len(m.Files) == 0 {
		return domain.Errorf(domain.EINVALID, "Write a message first.")
	}
	return domain.MessageText.Check(m.Text)
}

// Send records a person's message and runs the agent on it. While the agent works, the
// message waits in the queue (Sent.Queued) and goes when the run ends; a message that
// interrupts (Message.Interrupt), or one sent while the step waits for the answer to a live
// question, stops the reply being written first (its text so far is kept), so that the
// agent turns to it at once. Questions still pending are superseded. The
// nonce makes a re-sent message (double Enter, a retried request) harmless.
func (r *Runner) Send(ctx context.Context, conversationID int64, m domain.Message) (domain.Sent, error) {
	m.Text = domain.NormalizeNewlines(m.Text)
	if err := checkMessage(m); err != nil {
		return domain.Sent{}, err
	}
	if err := r.mayContinue(ctx, conversationID); err != nil {
		return domain.Sent{}, err
	}
	var sent domain.Sent
	// The ledger says when the message interrupts (ErrRunning): it queues it otherwise.
	err := r.interrupting(ctx, conversationID, true, func() (err error) {
		sent, err = r.ledger.StartRun(ctx, conversationID, m)
		return err
	})
	if err == nil && sent.Step != 0 {
		r.dispatch(conversationID, sent.Step)
	}
	return sent, err
}

// interrupting runs start, which gives ErrRunning while the agent works; when stop says so,
// the reply being written is stopped then, and start runs again.
func (r *Runner) interrupting(ctx context.Context, conversationID int64, stop bool, start func() error) error {
	err := start()
	if !stop || !errors.Is(err, domain.ErrRunning) {
		return err
	}
	stopped := r.StopReply(ctx, conversationID)
	settled, serr := r.settleNow(ctx, conversationID)
	if serr != nil {
		return serr
	}
	if stopped || settled {
		err = start()
	}
	return err
}

// SendQueued sends the person's queued messages now, stopping the reply being written.
func (r *Runner) SendQueued(ctx context.Context, conversationID int64) error {
	if err := r.mayContinue(ctx, conversationID); err != nil {
		return err
	}
	var step int64
	err := r.interrupting(ctx, conversationID, true, func() (err error) {
		step, err = r.ledger.SendQueued(ctx, conversationID)
		return err
	})
	if err == nil {
		r.dispatch(conversationID, step)
	}
	return err
}

// Regenerate has the agent answer the person's last message again, in a new version of the
// conversation (the reply being written, if any, is stopped first). It returns the version.
func (r *Runner) Regenerate(ctx context.Context, conversationID int64, by, nonce string) (int64, error) {
	if err := r.mayContinue(ctx, conversationID); err != nil {
		return 0, err
	}
	return r.startVersion(ctx, conversationID, func() (int64, int64, error) {
		return r.ledger.Regenerate(ctx, conversationID, by, nonce)
	})
}

// Edit puts m in place of one of the person's messages (its event id), in a new version of
// the conversation, and runs the agent on it. It returns the version.
func (r *Runner) Edit(ctx context.Context, conversationID, messageID int64, m domain.Message) (int64, error) {
	m.Text = domain.NormalizeNewlines(m.Text)
	if err := domain.MessageText.Check(m.Text); err != nil {
		return 0, err
	}
	if len(strings.TrimSpace(m.Text)) == 0 {
		return 0, domain.Errorf(domain.EINVALID, "Write the message first.")
	}
	if err := r.mayContinue(ctx, conversationID); err != nil {
		return 0, err
	}
	return r.startVersion(ctx, conversationID, func() (int64, int64, error) {
		return r.ledger.Edit(ctx, conversationID, messageID, m)
	})
}

// startVersion runs start, a ledger call that starts a version and its run (the reply being
// written stopped first), and runs the run's step.
func (r *Runner) startVersion(ctx context.Context, conversationID int64, start func() (step, version int64, err error)) (int64, error) {
	var step, version int64
	err := r.interrupting(ctx, conversationID, true, func() (err error) {
		step, version, err = start()
		return err
	})
	if err == nil && step != 0 {
		r.dispatch(conversationID, step)
	}
	return version, err
}

// StopRun cuts off the agent's running step in the conversation, why being the error the
// conversation shows. It reports whether a step was running.
func (r *Runner) StopRun(conversationID int64, why error) bool {
	r.mu.Lock()
	a, ok := r.running[conversationID]
	r.mu.Unlock()
	if ok {
		a.cancel(why)
	}
	return ok
}

// StopReply stops the reply the agent is writing in the conversation, as the person asked:
// the model's request is cancelled, a remote task is cancelled, the text so far is kept and
// the run ends stopped. It waits until the run has ended and reports whether one was running.
func (r *Runner) StopReply(ctx context.Context, conversationID int64) bool {
	r.mu.Lock()
	a, ok := r.running[conversationID]
	r.mu.Unlock()
	if !ok {
		return false
	}
	a.cancel(domain.ErrStopped)
	select {
	case <-a.done:
	case <-ctx.Done():
	}
	return true
}

// Retry runs a failed, interrupted or stopped conversation's agent again.
func (r *Runner) Retry(ctx context.Context, conversationID int64) error {
	if err := r.mayContinue(ctx, conversationID); err != nil {
		return err
	}
	if _, err := r.settleNow(ctx, conversationID); err != nil {
		return err
	}
	step, err := r.ledger.RetryRun(ctx, conversationID)
	if err != nil {
		return err
	}
	r.dispatch(conversationID, step)
	return nil
}
