package web

import (
	"context"
	"testing"
	"time"
)

// A stream over the cap waits for one of its person's to close (a page going to another),
// and gets its place then; another person's streams do not free it.
func TestStreamCounter_WaitsForAClosingStream(t *testing.T) {
	var sc streamCounter
	free1, ok1 := sc.acquire(context.Background(), 1, 2)
	_, ok2 := sc.acquire(context.Background(), 1, 2)
	freeOther, okOther := sc.acquire(context.Background(), 2, 2)
	if !ok1 || !ok2 || !okOther {
		t.Fatal("the streams under the cap were refused")
	}
	got := make(chan bool, 1)
	go func() {
		_, ok := sc.acquire(context.Background(), 1, 2)
		got <- ok
	}()
	waiting := func() int {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return sc.waiting
	}
	for deadline := time.Now().Add(5 * time.Second); waiting() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the third stream did not wait")
		}
	}
	freeOther() // another person's stream closing gives no place to person 1
	select {
	case ok := <-got:
		t.Fatalf("the third stream ended its wait when another person's closed (ok %v)", ok)
	default:
	}
	free1()
	if !<-got {
		t.Fatal("the third stream was refused though a stream closed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := sc.acquire(ctx, 1, 2); ok {
		t.Fatal("a stream over the cap got a place with nothing closing")
	}
}
