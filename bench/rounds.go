package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parley-chat/parley/backend/builtin"
)

// benchAnswers measures the delay from an answer's POST to the first of the reply it
// resumes on the stream (the reply starts at once), with many conversations answering: all
// at the same instant, then spread over a second.
func benchAnswers(ctx context.Context, o benchOptions, out io.Writer) error {
	server, err := startParley("", o, "answers")
	if err != nil {
		return err
	}
	defer server.stop()
	fmt.Fprintln(out)
	for _, spread := range []time.Duration{0, time.Second} {
		if err := answerRound(ctx, server, o, spread, out); err != nil {
			return err
		}
	}
	return nil
}

// answerRound has o.answers conversations ask, then answers them spread over spread.
func answerRound(ctx context.Context, server *child, o benchOptions, spread time.Duration, out io.Writer) error {
	base, client, n := "http://"+server.addr, benchClient(), o.answers
	plan := builtin.BenchPlan{Ask: true, Tokens: 20}
	// The streams start at the beginning: the question card they must see may be on the page.
	urls := make([]string, n)
	if err := forEach(n, 8, func(i int) error {
		path, err := startConversation(ctx, client, base, benchPerson(i), "bench", plan.String())
		urls[i] = base + path + "/stream?n=1&after=0#" + benchPerson(i)
		return err
	}); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	streams := make([]*benchStream, n)
	asked := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range streams {
		streams[i] = newBenchStream(plan)
		wg.Add(1)
		go func(s *benchStream, u string) {
			defer wg.Done()
			seen := false
			s.follow(rctx, u, func(s *benchStream) bool {
				if s.question != 0 && !seen {
					seen = true
					asked <- struct{}{}
				}
				return s.first.Load() != 0
			})
		}(streams[i], urls[i])
	}
	for range n {
		select {
		case <-asked:
		case <-rctx.Done():
			return errors.New("answers: not every conversation asked")
		}
	}
	if o.profile != "" && spread == 0 {
		server.cmd.Process.Signal(syscall.SIGUSR1)
	}
	cpu0 := procCPU(server.pid())
	t0 := time.Now().Add(100 * time.Millisecond)
	var posts sync.WaitGroup
	for i, s := range streams {
		posts.Add(1)
		go func(s *benchStream, at time.Time) {
			defer posts.Done()
			time.Sleep(time.Until(at))
			s.mark.Store(time.Now().UnixNano())
			resp, err := client.PostForm(base+fmt.Sprintf("/questions/%d/answer#%s", s.question, benchPerson(i)), url.Values{"go": {"yes"}})
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("answer %d: %s %.200s", s.question, resp.Status, b)
				}
			}
			if err != nil {
				s.err = err
			}
		}(s, t0.Add(spread*time.Duration(i)/time.Duration(n)))
	}
	posts.Wait()
	wg.Wait()
	if o.profile != "" && spread == 0 {
		server.cmd.Process.Signal(syscall.SIGUSR2)
	}
	var lat []time.Duration
	var firstErr error
	for _, s := range streams {
		if f := s.first.Load(); f != 0 {
			lat = append(lat, time.Duration(f-s.mark.Load()))
		} else if firstErr == nil {
			firstErr = fmt.Errorf("question %d: nothing after the answer: %v", s.question, s.err)
		}
	}
	if firstErr != nil {
		fmt.Fprintln(out, "answers:", firstErr)
	}
	slices.Sort(lat)
	when := "at the same instant"
	if spread > 0 {
		when = "spread over " + spread.String()
	}
	fmt.Fprintf(out, "answer POST -> first of the resumed reply on the stream, %d conversations answering %s: p50 %s, p99 %s, max %s (%d of %d; Parley CPU %s, %.2f ms an answer)\n",
		n, when, ms(pct(lat, .5)), ms(pct(lat, .99)), ms(pct(lat, 1)), len(lat), n, procCPU(server.pid())-cpu0,
		float64((procCPU(server.pid())-cpu0).Microseconds())/1000/float64(n))
	return nil
}

// benchPage times the page of a conversation of o.page messages, and a reply streaming in
// it next to one in a new conversation.
func benchPage(ctx context.Context, o benchOptions, out io.Writer) error {
	db, clean, err := benchDatabase(o)
	if err != nil {
		return err
	}
	defer clean()
	if err := seedLongConversation(ctx, db, o.page/2); err != nil {
		return err
	}
	server, err := startParley(db, o, "page")
	if err != nil {
		return err
	}
	defer server.stop()
	base, client := "http://"+server.addr, benchClient()
	var times []time.Duration
	var page string
	var first time.Duration
	for i := range 21 {
		t := time.Now()
		resp, err := client.Get(base + "/c/1")
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("page: %s", resp.Status)
		}
		if i > 0 {
			times = append(times, time.Since(t))
		} else {
			first = time.Since(t)
		}
		page = string(b)
	}
	slices.Sort(times)
	fmt.Fprintf(out, "\npage of a conversation of %d messages (%d KB): median %s, p90 %s, max %s; the first load after a start %s\n",
		o.page, len(page)/1000, ms(pct(times, .5)), ms(pct(times, .9)), ms(pct(times, 1)), ms(first))
	// One fast reply in the long conversation, then one in a new conversation.
	m := afterID.FindStringSubmatch(page)
	if m == nil {
		return errors.New("page: no stream")
	}
	for _, where := range []string{"in it", "in a new conversation"} {
		plan := builtin.BenchPlan{Start: time.Now().Add(time.Second), Rate: 500, Tokens: 5000}
		u := base + "/c/1/stream?n=1&after=" + m[1]
		if where == "in it" {
			resp, err := client.PostForm(base+"/c/1/messages", url.Values{"text": {plan.String()}})
			if err != nil {
				return err
			}
			resp.Body.Close()
		} else {
			if u, err = openConversation(ctx, client, base, "bench", "bench", plan.String()); err != nil {
				return err
			}
		}
		s := newBenchStream(plan)
		if o.profile != "" {
			server.cmd.Process.Signal(syscall.SIGUSR1)
		}
		cpu0 := procCPU(server.pid())
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		s.follow(rctx, u, func(s *benchStream) bool { return s.done })
		cancel()
		if o.profile != "" {
			server.cmd.Process.Signal(syscall.SIGUSR2)
		}
		if s.next < plan.Tokens && s.err != nil {
			return fmt.Errorf("page: the reply %s: %w", where, s.err)
		}
		r := benchResult{delivered: s.next}
		fmt.Fprintf(out, "a reply of %d tokens at 500/s %s: Parley %.1f µs/token, %d delivered\n", plan.Tokens, where, r.perToken(procCPU(server.pid())-cpu0), s.next)
	}
	return nil
}

// benchIdle measures Parley's memory idle, then holding o.idle streams open on finished
// conversations.
func benchIdle(ctx context.Context, o benchOptions, out io.Writer) error {
	server, err := startParley("", o, "idle")
	if err != nil {
		return err
	}
	defer server.stop()
	base, client := "http://"+server.addr, benchClient()
	resp, err := client.Get(base + "/")
	if err != nil {
		return err
	}
	resp.Body.Close()
	time.Sleep(2 * time.Second)
	idle, _ := procMemory(server.pid())
	convs := max(1, o.idle/20)
	plan := builtin.BenchPlan{Tokens: 5}
	paths := make([]string, convs)
	if err := forEach(convs, 8, func(i int) error {
		var err error
		paths[i], err = startConversation(ctx, client, base, benchPerson(i), "bench", plan.String())
		return err
	}); err != nil {
		return err
	}
	// Each conversation's reply runs to its end; then its page is loaded, as a browser would,
	// and the idle streams open from the page's last event, as the page's stream does.
	urls := make([]string, convs)
	if err := forEach(convs, 8, func(i int) error {
		s := newBenchStream(plan)
		s.follow(ctx, base+paths[i]+"/stream?after=0#"+benchPerson(i), func(s *benchStream) bool { return s.done })
		if !s.done {
			return fmt.Errorf("%s: the reply did not finish: %v", paths[i], s.err)
		}
		var err error
		urls[i], err = streamURL(ctx, client, base, benchPerson(i), paths[i])
		return err
	}); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ready sync.WaitGroup
	var failed atomic.Int64
	for i := range o.idle {
		s := newBenchStream(plan)
		ready.Add(1)
		go func() {
			once := false
			// The stream's first event (it tells the page it is up) makes it ready.
			s.follow(rctx, urls[i%convs], func(*benchStream) bool {
				if !once {
					once = true
					ready.Done()
				}
				return false
			})
			if !once {
				failed.Add(1)
				ready.Done()
			}
		}()
	}
	ready.Wait()
	time.Sleep(2 * time.Second)
	held, peak := procMemory(server.pid())
	if o.profile != "" {
		server.cmd.Process.Signal(syscall.SIGUSR2)
		time.Sleep(5 * time.Second)
		afterGC, _ := procMemory(server.pid())
		fmt.Fprintf(out, "(after a collection, with the heap profile written: %.0f MB RSS)\n", float64(afterGC)/1e6)
	}
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d of %d idle streams failed to open", n, o.idle)
	}
	fmt.Fprintf(out, "\nParley idle: %.1f MB RSS; holding %d idle streams on %d conversations: %.0f MB RSS (peak %.0f MB)\n",
		float64(idle)/1e6, o.idle, convs, float64(held)/1e6, float64(peak)/1e6)
	return nil
}
