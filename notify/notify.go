// Package notify delivers word of questions to the channels people and groups set up
// (webhooks, email, ntfy topics and the Web Push subscriptions of their devices), from the
// outbox the ledger fills in the transaction that asks: a crash loses none, a failing
// channel is retried with backoff, a question resolved meanwhile is skipped, and a person's
// quiet hours hold theirs back. Each notification links to the question's page; following it
// needs the person to be signed in, and nothing is answered by following a link. Where the
// channels may post is the operator's rule (Networks), checked on the address dialled.
package notify

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Outbox is where the deliveries wait (the store).
type Outbox interface {
	DueNotifications(ctx context.Context, now time.Time, limit int) ([]domain.Notification, error)
	NextNotification(ctx context.Context) (time.Time, error)
	NotificationTried(ctx context.Context, id int64, state, errText string, next time.Time) error
	// NotificationWaits puts a delivery off without counting a try (quiet hours).
	NotificationWaits(ctx context.Context, id int64, until time.Time) error
	// DropChannel removes a channel gone for good (a push subscription expired).
	DropChannel(ctx context.Context, id int64, why string) error
}

// Options configures New.
type Options struct {
	Outbox Outbox
	// BaseURL is Parley's public address ("https://parley.example"): links start with it.
	BaseURL string
	// SMTP sends the emails; without it, email channels fail, saying so.
	SMTP *SMTP
	// Networks are the networks besides the public internet that channels may reach.
	Networks Networks
	// Push signs and encrypts Web Push messages; without its keys, push channels fail.
	Push Push
	// Backoff is the wait before the first retry, doubled each time up to an hour
	// (default 30 s); Attempts how many tries at most (default 8).
	Backoff  time.Duration
	Attempts int
	Logger   *slog.Logger
	// Now is the clock quiet hours are read on (default time.Now).
	Now func() time.Time
}

// Notifier delivers what the outbox holds.
type Notifier struct {
	opts Options
	// http posts to URLs the network rule allows; plain posts to plain http:// push
	// endpoints, which must be in a listed network.
	http, plain *http.Client
	wake        chan struct{}
	wg          sync.WaitGroup
	stop        context.CancelFunc
}

// New returns a Notifier; Start runs it.
func New(opts Options) *Notifier {
	opts.Backoff = cmp.Or(opts.Backoff, 30*time.Second)
	opts.Attempts = cmp.Or(opts.Attempts, 8)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	return &Notifier{opts: opts, wake: make(chan struct{}, 1),
		http: opts.Networks.Client(10*time.Second, false), plain: opts.Networks.Client(10*time.Second, true)}
}

// Start delivers until Stop.
func (n *Notifier) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	n.wg.Add(1)
	go n.run(ctx)
}

// Stop ends the deliveries under way (they are tried again after a restart) and waits.
func (n *Notifier) Stop() {
	if n.stop != nil {
		n.stop()
	}
	n.wg.Wait()
}

// Wake tells the notifier something may be due now.
func (n *Notifier) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// run picks the deliveries due and sends each on its own (a slow webhook holds up no other),
// at most maxSending at once.
func (n *Notifier) run(ctx context.Context) {
	defer n.wg.Done()
	var mu sync.Mutex
	// sending are the deliveries under way; finished, those that ended since the outbox was
	// last read, which that read may still show due.
	sending, finished := map[int64]bool{}, map[int64]bool{}
	slots := make(chan struct{}, maxSending)
	for {
		mu.Lock()
		clear(finished)
		mu.Unlock()
		due, err := n.opts.Outbox.DueNotifications(ctx, time.Now(), 2*maxSending)
		if err != nil && ctx.Err() == nil {
			n.opts.Logger.Error("notifications due", "error", err)
		}
		for _, d := range due {
			mu.Lock()
			busy := sending[d.ID] || finished[d.ID]
			if !busy {
				sending[d.ID] = true
			}
			mu.Unlock()
			if busy {
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.deliver(ctx, d)
				<-slots
				mu.Lock()
				delete(sending, d.ID)
				finished[d.ID] = true
				mu.Unlock()
				n.Wake() // a retry may be due sooner than the loop thought
			}()
		}
		wait := time.Minute
		if next, err := n.opts.Outbox.NextNotification(ctx); err == nil && !next.IsZero() {
			wait = min(wait, time.Until(next))
		}
		if wait <= 0 {
			// Due now, and being sent: its end wakes the loop. A second bounds the wait for
			// those beyond the ones picked.
			wait = time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-n.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// maxSending bounds the deliveries under way at once.
const maxSending = 16

// deliver sends one notification and records how it went.
func (n *Notifier) deliver(ctx context.Context, d domain.Notification) {
	record := func(state, errText string, next time.Time) {
		if err := n.opts.Outbox.NotificationTried(context.WithoutCancel(ctx), d.ID, state, errText, next); err != nil {
			n.opts.Logger.Error("notification", "id", d.ID, "error", err)
		}
	}
	if !d.Question.Pending() {
		record("skipped", "", time.Time{})
		return
	}
	if until := d.Quiet.Until(n.opts.Now()); !until.IsZero() {
		if err := n.opts.Outbox.NotificationWaits(context.WithoutCancel(ctx), d.ID, until); err != nil {
			n.opts.Logger.Error("notification", "id", d.ID, "error", err)
		}
		return
	}
	var err error
	switch d.Channel.Kind {
	case domain.ChannelWebhook:
		err = n.webhook(ctx, d)
	case domain.ChannelEmail:
		err = n.email(ctx, d)
	case domain.ChannelNtfy:
		err = n.ntfy(ctx, d)
	case domain.ChannelPush:
		err = n.push(ctx, d)
	default:
		err = permanent{fmt.Errorf("unknown channel kind %q", d.Channel.Kind)}
	}
	if ctx.Err() != nil {
		return // stopping: it stays due, and goes after the restart
	}
	if err == nil {
		record("sent", "", time.Time{})
		return
	}
	var g gone
	if errors.As(err, &g) {
		n.opts.Logger.Info("channel gone", "channel", d.Channel.ID, "kind", d.Channel.Kind, "why", err)
		if err := n.opts.Outbox.DropChannel(context.WithoutCancel(ctx), d.Channel.ID, err.Error()); err != nil {
			n.opts.Logger.Error("notification", "id", d.ID, "error", err)
		}
		return
	}
	var next time.Time
	var p permanent
	var refused *RefusedError
	if errors.As(err, &refused) {
		if u, perr := url.Parse(d.Channel.Target); perr == nil {
			_, literal := netip.ParseAddr(u.Hostname())
			refused.ByName = literal != nil
		}
		err = permanent{fmt.Errorf("not sent: %w", refused)}
	}
	if !errors.As(err, &p) && d.Attempts+1 < n.opts.Attempts {
		wait := min(n.opts.Backoff<<d.Attempts, time.Hour)
		var later retryAfter
		if errors.As(err, &later) {
			wait = max(wait, min(later.after, time.Hour))
		}
		next = time.Now().Add(wait)
	}
	msg := err.Error()
	if next.IsZero() {
		msg += " (given up)"
	} else {
		msg += fmt.Sprintf(" (trying again at %s)", next.UTC().Format("15:04:05 UTC"))
	}
	n.opts.Logger.Warn("notification failed", "channel", d.Channel.ID, "kind", d.Channel.Kind, "question", d.Question.ID, "error", msg)
	record("pending", msg, next)
}

// permanent is a failure that trying again would not mend (a webhook that answers 404).
type permanent struct{ error }

// gone is a channel its service says is no more (a push subscription answering 404 or 410):
// it is removed.
type gone struct{ error }

// retryAfter is a failure whose service said when to try again (429 or 503 with
// Retry-After).
type retryAfter struct {
	error
	after time.Duration
}

// post sends req with client and says how it went (see answered). what names the receiver
// in the errors ("the webhook").
func post(client *http.Client, req *http.Request, what string) error {
	req.Header.Set("User-Agent", "Parley")
	resp, err := client.Do(req)
	if err != nil {
		return unreached(err, what)
	}
	return answered(resp, what)
}

// unreached is a request that got no answer, said without its URL (which may hold a secret).
func unreached(err error, what string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	return fmt.Errorf("%s could not be reached: %v", what, err)
}

// answered reads a response and closes it: nil for 2xx; permanent for the 4xx that trying
// again would not mend; otherwise an error to retry, after Retry-After when given.
func answered(resp *http.Response, what string) error {
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	// Its status alone: what a URL inside the network answers is not for the page to show.
	err := fmt.Errorf("%s answered %s", what, resp.Status)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		ra := strings.TrimSpace(resp.Header.Get("Retry-After"))
		if secs, perr := strconv.Atoi(ra); perr == nil && secs > 0 {
			return retryAfter{err, time.Duration(secs) * time.Second}
		}
		if at, perr := http.ParseTime(ra); perr == nil && time.Until(at) > 0 {
			return retryAfter{err, time.Until(at)}
		}
		return err
	case resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusRequestTimeout:
		return permanent{err}
	}
	return err
}

// Link is the address of the question's own page.
func (n *Notifier) Link(q domain.QuestionRecord) string { return n.opts.BaseURL + q.PagePath() }

// summary is the notification in a line: who asks whom what.
func summary(d domain.Notification) string {
	q := d.Question
	// The asker names itself (its MCP clientInfo): the person whose token it used is said too.
	// The message's first line, without the Markdown marks a chat or a subject would show.
	msg := strings.NewReplacer("**", "", "__", "", "`", "").Replace(firstLine(q.Message))
	line := fmt.Sprintf("%s asks %s: %s", firstLine(q.Asker), d.Owner, msg)
	if q.Routed() {
		line = fmt.Sprintf("%s, for %s, asks %s: %s", firstLine(q.Asker), d.Owner, q.Audience().Words(), msg)
	}
	if d.Reason == "escalated" {
		line = "Still waiting, now for you too: " + line
	}
	return line
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' ' // no control character reaches a header or a chat line
		}
		return r
	}, s)
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// WebhookBody is what a webhook gets: Slack's and Mattermost's "text", and the question.
type WebhookBody struct {
	Text   string        `json:"text"`
	Parley WebhookParley `json:"parley"`
}

// WebhookParley is the question, for programs.
type WebhookParley struct {
	Event    string          `json:"event"` // question.asked or question.escalated
	URL      string          `json:"url"`
	Owner    string          `json:"owner"`
	Question WebhookQuestion `json:"question"`
}

// WebhookQuestion is the question as asked (the API's question model), with where it is.
type WebhookQuestion struct {
	domain.Question
	ConversationID int64     `json:"conversation_id"`
	AskedAt        time.Time `json:"asked_at"`
}

func (n *Notifier) webhook(ctx context.Context, d domain.Notification) error {
	link := n.Link(d.Question)
	// No "<" or ">" reaches a chat: "<!channel>" would call everyone in it.
	text := strings.NewReplacer("<", "‹", ">", "›").Replace(summary(d))
	q := d.Question.Question
	q.Fields = make([]domain.Field, len(q.Fields))
	for i, f := range d.Question.Fields {
		f.Default = nil // what an agent proposes (an approval's arguments) stays in Parley
		q.Fields[i] = f
	}
	body, err := json.Marshal(WebhookBody{Text: text + "\nAnswer in Parley: " + link,
		Parley: WebhookParley{Event: "question." + d.Reason, URL: link, Owner: d.Owner,
			Question: WebhookQuestion{Question: q, ConversationID: d.Question.ConversationID, AskedAt: d.Question.AskedAt}}})
	if err != nil {
		return permanent{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Channel.Target, bytes.NewReader(body))
	if err != nil {
		return permanent{err}
	}
	req.Header.Set("Content-Type", "application/json")
	return post(n.http, req, "the webhook")
}
