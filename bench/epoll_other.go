//go:build !linux

package bench

import (
	"context"
	"sync"
)

// epollReader reads streams a goroutine each where there is no epoll.
type epollReader struct {
	wg    sync.WaitGroup
	start []func(context.Context)
}

func newEpollReader() (*epollReader, error) { return &epollReader{}, nil }

func (e *epollReader) add(ctx context.Context, u string, s *benchStream, done func(*benchStream) bool) error {
	e.start = append(e.start, func(ctx context.Context) { s.follow(ctx, u, func(s *benchStream) bool { return done(s) && s.done }) })
	return nil
}

func (e *epollReader) run(ctx context.Context) {
	for _, f := range e.start {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); f(ctx) }()
	}
	e.wg.Wait()
}
