package runner

import (
	"context"
	"sync"

	"github.com/parley-chat/parley/domain"
)

// Watch tells people's open pages that one of their conversations changed (a run started or
// ended, a question was asked or answered, a message came, a title changed), so that their
// sidebar and counts follow. It hears every committed event (Publish) and anything else that
// changes a conversation (Changed); a page subscribes for one account, or for all of them.
//
// Publish runs where the ledger commits, so it only notes the conversations that changed:
// a goroutine of the Watch learns whose they are (from the ledger, remembered) and wakes
// their pages. A wake is a signal, dropped when one is pending already: a page rereads what
// it shows when it wakes.
type Watch struct {
	// owner says whose a conversation is, and whether its questions may be others' too.
	owner func(ctx context.Context, conversationID int64) (account int64, addressed bool, err error)
	// audience names the others a conversation's questions are for (a group's members),
	// asked at each change of an addressed conversation: their pages wake too.
	audience  func(ctx context.Context, conversationID int64) ([]int64, error)
	addressed map[int64]bool

	mu      sync.Mutex
	subs    map[int64]map[*Watcher]struct{} // by account; 0: pages that watch everyone
	nsubs   int
	owners  map[int64]int64 // conversation → account, as learnt
	changed map[int64]struct{}
	// versions count the changes of each account's conversations (0: of everyone's), so
	// that a page can tell whether anything changed since it was drawn.
	versions map[int64]uint64
	kick     chan struct{}
}

// maxOwners bounds what the Watch remembers of whose conversations are whose.
const maxOwners = 100_000

// NewWatch returns a Watch that learns whose a conversation is from owner, and whom else
// its questions are for from audience (asked only of the conversations owner says are
// addressed), until ctx ends.
func NewWatch(ctx context.Context, owner func(ctx context.Context, conversationID int64) (int64, bool, error),
	audience func(ctx context.Context, conversationID int64) ([]int64, error)) *Watch {
	w := &Watch{owner: owner, audience: audience, addressed: map[int64]bool{}, subs: map[int64]map[*Watcher]struct{}{}, owners: map[int64]int64{},
		changed: map[int64]struct{}{}, versions: map[int64]uint64{}, kick: make(chan struct{}, 1)}
	go w.run(ctx)
	return w
}

// Watcher is one page's subscription: C receives a value when something it watches changed.
type Watcher struct {
	C       chan struct{}
	w       *Watch
	account int64
}

// Subscribe watches the conversations of an account; account 0 watches everyone's.
func (w *Watch) Subscribe(account int64) *Watcher {
	s := &Watcher{C: make(chan struct{}, 1), w: w, account: account}
	w.mu.Lock()
	if w.subs[account] == nil {
		w.subs[account] = map[*Watcher]struct{}{}
	}
	w.subs[account][s] = struct{}{}
	w.nsubs++
	w.mu.Unlock()
	return s
}

// Close ends the subscription.
func (s *Watcher) Close() {
	w := s.w
	w.mu.Lock()
	if _, ok := w.subs[s.account][s]; ok {
		delete(w.subs[s.account], s)
		w.nsubs--
		if len(w.subs[s.account]) == 0 {
			delete(w.subs, s.account)
		}
	}
	w.mu.Unlock()
}

// Publish notes the conversations of committed events.
func (w *Watch) Publish(events []domain.Event) {
	w.mu.Lock()
	for _, ev := range events {
		w.changed[ev.ConversationID] = struct{}{}
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Address notes that a conversation's questions are for others than its owner too (an
// escalation's): each change of it wakes their pages as well, from now on, this one too.
func (w *Watch) Address(conversationID int64) {
	w.mu.Lock()
	w.addressLocked(conversationID)
	w.changed[conversationID] = struct{}{}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *Watch) addressLocked(conversationID int64) {
	if len(w.addressed) >= maxOwners {
		clear(w.addressed)
	}
	w.addressed[conversationID] = true
}

// Changed wakes the pages of the account whose conversation changed outside the event log
// (renamed, archived, deleted).
func (w *Watch) Changed(conversationID, account int64) {
	w.mu.Lock()
	w.remember(conversationID, account)
	w.wakeLocked(account)
	w.mu.Unlock()
}

// Forget wakes the pages of the account whose conversation was deleted, and forgets whose
// it was.
func (w *Watch) Forget(conversationID, account int64) {
	w.mu.Lock()
	delete(w.owners, conversationID)
	w.wakeLocked(account)
	w.mu.Unlock()
}

// Version is the count of changes to the account's conversations (0: everyone's) so far. A
// page that read it before what it shows, and finds it the same later, missed nothing;
// changes not yet counted wake its subscription.
func (w *Watch) Version(account int64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.versions[account]
}

func (w *Watch) wakeLocked(account int64) {
	w.versions[account]++
	if account != 0 {
		w.versions[0]++
	}
	for _, id := range []int64{account, 0} {
		for s := range w.subs[id] {
			select {
			case s.C <- struct{}{}:
			default:
			}
		}
		if account == 0 {
			break
		}
	}
}

func (w *Watch) run(ctx context.Context) {
	var unknown, others []int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		w.mu.Lock()
		unknown, others = unknown[:0], others[:0]
		for id := range w.changed {
			if acct, ok := w.owners[id]; ok {
				w.wakeLocked(acct)
			} else {
				unknown = append(unknown, id)
			}
			if w.addressed[id] {
				others = append(others, id)
			}
		}
		clear(w.changed)
		w.mu.Unlock()
		for _, id := range unknown {
			acct, addressed, err := w.owner(ctx, id)
			if err != nil {
				continue // deleted meanwhile: whoever deleted it said so
			}
			w.mu.Lock()
			w.remember(id, acct)
			w.wakeLocked(acct)
			if addressed && !w.addressed[id] {
				w.addressLocked(id)
				others = append(others, id)
			}
			w.mu.Unlock()
		}
		for _, id := range others {
			accts, err := w.audience(ctx, id)
			if err != nil {
				continue
			}
			w.mu.Lock()
			for _, a := range accts {
				w.wakeLocked(a)
			}
			w.mu.Unlock()
		}
	}
}

// remember notes whose a conversation is; w.mu is held.
func (w *Watch) remember(conversationID, account int64) {
	if len(w.owners) >= maxOwners {
		clear(w.owners)
	}
	w.owners[conversationID] = account
}
