package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// Who calls: every JSON-RPC request carries the token of an A2A client, its tasks are its
// own, and a revoked client's open requests end.

// clientKey holds the client of a request in its context; the SDK carries the context's
// values into the executor and the task store.
type clientKey struct{}

// clientOf is the client of the request; the zero client, which owns nothing, when none.
func clientOf(ctx context.Context) domain.A2AClient {
	c, _ := ctx.Value(clientKey{}).(domain.A2AClient)
	return c
}

// authenticate finds the client whose bearer token the request carries.
func (s *Server) authenticate(r *http.Request) (domain.A2AClient, error) {
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return domain.A2AClient{}, domain.Errorf(domain.EUNAUTHORIZED, "A bearer token is required: Authorization: Bearer <the client's token>.")
	}
	return s.db.A2AClientByToken(r.Context(), secret)
}

// owns reports ErrTaskNotFound unless the task is one the request's client made: another
// client's task is not found, as one that does not exist.
func (x *executor) owns(ctx context.Context, id a2a.TaskID) error {
	_, err := x.s.db.A2ATask(ctx, x.agent, clientOf(ctx).ID, string(id))
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return a2a.ErrTaskNotFound
	}
	return err
}

// revokedError ends a request whose client was revoked while it was open.
func revokedError(c domain.A2AClient) error {
	return fmt.Errorf("the token of the A2A client %q was revoked: %w", c.Name, a2a.ErrServerError)
}

// watch has the request watched until done (Options.Watch): ctx ends when its client is
// revoked, and revoked then reports it.
func (s *Server) watch(ctx context.Context) (_ context.Context, revoked func() bool, done func()) {
	ctx, cancel := context.WithCancel(ctx)
	c := clientOf(ctx)
	var flag atomic.Bool
	remove, open, ok := s.opts.Watch(ctx, cancel, func(ctx context.Context) (time.Time, bool) {
		cur, err := s.db.A2AClient(ctx, c.ID)
		switch {
		case err == nil && cur.Revoked.IsZero():
			return time.Time{}, true
		case err == nil || domain.ErrorCode(err) == domain.ENOTFOUND:
			flag.Store(true)
		case !errors.Is(err, context.Canceled):
			s.log.Error("a2a: check the client of an open request", "client", c.Name, "error", err)
		}
		return time.Time{}, false
	})
	if !ok {
		cancel()
	}
	// Revoked: the sweep found it, or the request's own check before the next event did
	// (open runs check when access changed anywhere since).
	return ctx, func() bool { open(ctx); return flag.Load() }, func() { remove(); cancel() }
}

// untilRevoked is a request's events, which end with revokedError when its client is revoked.
func (s *Server) untilRevoked(ctx context.Context, events func(context.Context) iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		ctx, revoked, done := s.watch(ctx)
		defer done()
		for ev, err := range events(ctx) {
			if revoked() {
				break
			}
			if !yield(ev, err) {
				return
			}
		}
		if revoked() {
			yield(nil, revokedError(clientOf(ctx)))
		}
	}
}

// OnGetTaskPushConfig implements a2asrv.RequestHandler: another client's task is not found.
func (h handler) OnGetTaskPushConfig(ctx context.Context, params *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	if err := h.x.owns(ctx, params.TaskID); err != nil {
		return nil, err
	}
	return h.RequestHandler.OnGetTaskPushConfig(ctx, params)
}

// OnListTaskPushConfig implements a2asrv.RequestHandler: another client's task is not found.
func (h handler) OnListTaskPushConfig(ctx context.Context, params *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	if err := h.x.owns(ctx, params.TaskID); err != nil {
		return nil, err
	}
	return h.RequestHandler.OnListTaskPushConfig(ctx, params)
}

// OnSetTaskPushConfig implements a2asrv.RequestHandler: another client's task is not found.
func (h handler) OnSetTaskPushConfig(ctx context.Context, params *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	if err := h.x.owns(ctx, params.TaskID); err != nil {
		return nil, err
	}
	return h.RequestHandler.OnSetTaskPushConfig(ctx, params)
}

// OnDeleteTaskPushConfig implements a2asrv.RequestHandler: another client's task is not found.
func (h handler) OnDeleteTaskPushConfig(ctx context.Context, params *a2a.DeleteTaskPushConfigParams) error {
	if err := h.x.owns(ctx, params.TaskID); err != nil {
		return err
	}
	return h.RequestHandler.OnDeleteTaskPushConfig(ctx, params)
}

// OnCancelTask implements a2asrv.RequestHandler: another client's task is not found, even
// while an execution in memory holds it.
func (h handler) OnCancelTask(ctx context.Context, params *a2a.TaskIDParams) (*a2a.Task, error) {
	if params == nil {
		return nil, a2a.ErrInvalidParams
	}
	if err := h.x.owns(ctx, params.ID); err != nil {
		return nil, err
	}
	return h.RequestHandler.OnCancelTask(ctx, params)
}

// OnSendMessage implements a2asrv.RequestHandler: a message into another client's task
// finds no task; a blocking request of a client revoked meanwhile ends.
func (h handler) OnSendMessage(ctx context.Context, params *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	if params != nil && params.Message != nil && params.Message.TaskID != "" {
		if err := h.x.owns(ctx, params.Message.TaskID); err != nil {
			return nil, err
		}
	}
	ctx, revoked, done := h.x.s.watch(ctx)
	defer done()
	res, err := h.RequestHandler.OnSendMessage(ctx, params)
	if revoked() {
		return nil, revokedError(clientOf(ctx))
	}
	return res, err
}

// startClients serves the old shared token, if it is set, as its client, and says so when no
// client has a token: every request would be refused.
func (s *Server) startClients(ctx context.Context) error {
	if s.opts.LegacyToken != "" {
		c, err := s.db.LegacyA2AClient(ctx, s.opts.LegacyToken)
		if domain.ErrorCode(err) != "" {
			return errors.New(domain.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		s.log.Info(fmt.Sprintf("a2a: PARLEY_A2A_TOKEN is the token of the A2A client %q; give each client a token of its own "+
			"(parley a2a-client add NAME), then unset it", c.Name))
	}
	clients, err := s.db.A2AClients(ctx)
	if err != nil {
		return err
	}
	for _, c := range clients {
		if c.Revoked.IsZero() {
			return nil
		}
	}
	s.log.Warn("a2a: no client has a token, so every A2A request is refused: make one with parley a2a-client add NAME")
	return nil
}
