package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/parley-chat/parley/agent/builtin"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
)

// benchOptions is what `parley bench` is told.
type benchOptions struct {
	streams  []int
	rate     float64
	seconds  float64
	backends []string
	answers  int
	idle     int
	page     int
	profile  string
}

const benchUsage = `usage: parley bench [flags]

Starts Parley on a temporary database, as a child process, and measures its streams: N
conversations whose agents each write a Markdown reply at R tokens a second, followed by
N streams read the way the browser reads them. It reports, for each N, the delay from the
moment a token is due to its arrival (p50, p99, max), the tokens delivered, Parley's CPU
per token next to a bare net/http SSE server sending the same tokens in the same run, the
stream bytes per byte of text and Parley's peak memory; then the delay from answering a
question to the first text of the resumed reply, the time to render the page of a long
conversation, and the memory of Parley idle and holding many idle streams.

Flags:`

func parseBench(args []string, stderr io.Writer) (benchOptions, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, benchUsage); fs.PrintDefaults() }
	o := benchOptions{}
	streams := fs.String("streams", "100,250,500,1000,1500", "concurrent replies (and streams) of each run, comma-separated")
	fs.Float64Var(&o.rate, "rate", 50, "tokens a second of each reply")
	fs.Float64Var(&o.seconds, "seconds", 20, "how long each reply streams")
	backends := fs.String("backends", "scripted,openai", "agents that write: scripted (in Parley) and/or openai (a fake OpenAI-compatible model over HTTP)")
	fs.IntVar(&o.answers, "answers", 200, "conversations answering a question at once (0 skips)")
	fs.IntVar(&o.idle, "idle", 10000, "idle streams held for the memory figure (0 skips)")
	fs.IntVar(&o.page, "page", 2000, "messages of the conversation whose page is timed (0 skips)")
	fs.StringVar(&o.profile, "profile", "", "directory to write Parley's CPU profile of each run into (from the first token due to the end)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*streams, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return o, fmt.Errorf("--streams: %q is not a number of streams", s)
		}
		o.streams = append(o.streams, n)
	}
	for _, b := range strings.Split(*backends, ",") {
		if b = strings.TrimSpace(b); b != "scripted" && b != "openai" {
			return o, fmt.Errorf("--backends: %q is neither scripted nor openai", b)
		}
		o.backends = append(o.backends, b)
	}
	if o.rate <= 0 || o.seconds <= 0 {
		return o, errors.New("--rate and --seconds must be positive")
	}
	return o, nil
}

// runBench is `parley bench`.
func runBench(ctx context.Context, args []string, stdio stdio) error {
	o, err := parseBench(args, stdio.err)
	if err != nil {
		return err
	}
	out := stdio.out
	tokens := int(o.rate * o.seconds)
	fmt.Fprintf(out, "parley bench: %d CPUs, replies of %d tokens (%.1f bytes each on average) at %g tokens/s\n\n",
		runtime.NumCPU(), tokens, avgTokenBytes(tokens), o.rate)
	fmt.Fprintln(out, "streams  agent     delay p50   p99      max     delivered        Parley µs/token  bare µs/token  ratio  SSE B/text B  peak RSS  bench µs/token")
	for _, n := range o.streams {
		bare, err := benchRun(ctx, o, n, "bare")
		if err != nil {
			return err
		}
		for _, backend := range o.backends {
			r, err := benchRun(ctx, o, n, backend)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, r.line(bare))
		}
		fmt.Fprintln(out, bare.line(benchResult{}))
	}
	if o.answers > 0 {
		if err := benchAnswers(ctx, o, out); err != nil {
			return err
		}
	}
	if o.page > 0 {
		if err := benchPage(ctx, o, out); err != nil {
			return err
		}
	}
	if o.idle > 0 {
		if err := benchIdle(ctx, o, out); err != nil {
			return err
		}
	}
	return nil
}

func avgTokenBytes(n int) float64 {
	total := 0
	toks := builtin.BenchTokens(n)
	for _, t := range toks {
		total += len(t)
	}
	return float64(total) / float64(len(toks))
}

// child is a process the benchmark runs: Parley, or a peer.
type child struct {
	cmd   *exec.Cmd
	addr  string
	mu    sync.Mutex
	log   []string // the last lines it wrote
	clean func()   // removes what it leaves (its database), after it stops
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.log, "\n")
}

// keep collects the lines of r, the last 40, and sends the first that matches on found.
func (c *child) keep(r io.Reader, match *regexp.Regexp, found chan<- string) {
	if dir := os.Getenv("PARLEY_BENCH_LOG"); dir != "" {
		// Every line the children write, for a look at what they did (GODEBUG=gctrace=1, say).
		if f, err := os.OpenFile(filepath.Join(dir, "children.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			defer f.Close()
			r = io.TeeReader(r, f)
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.log = append(c.log, line)
		if len(c.log) > 40 {
			c.log = c.log[1:]
		}
		c.mu.Unlock()
		if m := match.FindStringSubmatch(line); m != nil && found != nil {
			found <- m[1]
			found = nil
		}
	}
}

// stop ends the child gracefully, then by force.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	if c.clean != nil {
		c.clean()
	}
}

var listening = regexp.MustCompile(`listening on http://([\d.:]+)`)

// startChild runs this binary with args and waits for its address: the "listening on" log
// line of parley serve, or the first line of bench-serve.
func startChild(args []string, env []string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(args[0], "/") {
		exe, args = args[0], args[1:]
	}
	c := &child{cmd: exec.Command(exe, args...)}
	c.cmd.Env = append(os.Environ(), env...)
	stdout, _ := c.cmd.StdoutPipe()
	stderr, _ := c.cmd.StderrPipe()
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	if args[0] == "bench-serve" {
		go c.keep(stdout, regexp.MustCompile(`^([\d.:]+)$`), found)
		go c.keep(stderr, listening, nil)
	} else {
		go c.keep(stdout, listening, nil)
		go c.keep(stderr, listening, found)
	}
	select {
	case c.addr = <-found:
		return c, nil
	case <-time.After(60 * time.Second):
		c.cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not start:\n%s", args[0], c.tail())
	}
}

// startParley serves Parley on the database at db (a new one, removed when it stops, if db
// is ""), with the bench agent and no sign-in, for as many streams and messages as the
// benchmark needs. PARLEY_BENCH_SERVER names another build of Parley to measure (an older
// one, say: it has only the openai backend).
func startParley(db string, o benchOptions, name string, env ...string) (*child, error) {
	var clean func()
	if db == "" {
		dir, err := os.MkdirTemp("", "parley-bench-")
		if err != nil {
			return nil, err
		}
		db, clean = filepath.Join(dir, "parley.db"), func() { os.RemoveAll(dir) }
	}
	env = append(env, "PARLEY_BENCH_AGENT=1")
	if o.profile != "" {
		env = append(env, "PARLEY_CPUPROFILE="+filepath.Join(o.profile, name+".prof"))
	}
	// People are named by a trusted proxy: the harness (see asPerson).
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--auth", "proxy", "--trusted-proxies", "127.0.0.1/32",
		"--max-streams", "1000000", "--message-rate", "100000000"}
	if exe := os.Getenv("PARLEY_BENCH_SERVER"); exe != "" {
		args = append([]string{exe}, args...)
	}
	c, err := startChild(args, env)
	if err != nil {
		if clean != nil {
			clean()
		}
		return nil, err
	}
	c.clean = clean
	return c, nil
}

// benchResult is what one run measured.
type benchResult struct {
	name            string
	streams         int
	lat             []time.Duration
	delivered, want int
	cpu, self, peer time.Duration
	sse, text       int64
	peak            int64
	late, failed    int
	firstErr        error
}

func (r benchResult) perToken(d time.Duration) float64 {
	if r.delivered == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(r.delivered)
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func (r benchResult) line(bare benchResult) string {
	ratio := ""
	bareCPU := ""
	if bare.delivered > 0 {
		bareCPU = fmt.Sprintf("%.1f", bare.perToken(bare.cpu))
		ratio = fmt.Sprintf("%.2f×", r.perToken(r.cpu)/bare.perToken(bare.cpu))
	}
	s := fmt.Sprintf("%-7d  %-8s  %-9s  %-7s  %-7s  %7d/%-7d  %15.1f  %13s  %5s  %12.1f  %6.0f MB  %14.1f",
		r.streams, r.name, ms(pct(r.lat, .5)), ms(pct(r.lat, .99)), ms(pct(r.lat, 1)), r.delivered, r.want,
		r.perToken(r.cpu), bareCPU, ratio, float64(r.sse)/float64(max(r.text, 1)), float64(r.peak)/1e6, r.perToken(r.self))
	if r.peer > 0 {
		s += fmt.Sprintf("  (the fake model: %.1f µs/token)", r.perToken(r.peer))
	}
	if r.late > 0 || r.failed > 0 {
		s += fmt.Sprintf("  [%d streams opened late, %d failed: %v]", r.late, r.failed, r.firstErr)
	}
	return s
}

// benchRun runs n replies through the backend ("bare": the bare SSE server instead of
// Parley) and reads them.
func benchRun(ctx context.Context, o benchOptions, n int, backend string) (benchResult, error) {
	r := benchResult{name: backend, streams: n}
	tokens := int(o.rate * o.seconds)
	client := benchClient()
	var server, peer *child
	var err error
	lead := 2*time.Second + time.Duration(n)*8*time.Millisecond
	switch backend {
	case "bare":
		if server, err = startChild([]string{"bench-serve", "bare"}, nil); err != nil {
			return r, err
		}
	default:
		var env []string
		if backend == "openai" {
			if peer, err = startChild([]string{"bench-serve", "model"}, nil); err != nil {
				return r, err
			}
			defer peer.stop()
			env = append(env, "PARLEY_OPENAI_BASE_URL=http://"+peer.addr+"/v1", "PARLEY_OPENAI_MODEL=bench-model")
		}
		if server, err = startParley("", o, fmt.Sprintf("%s-%d", backend, n), env...); err != nil {
			return r, err
		}
	}
	defer server.stop()
	base := "http://" + server.addr
	t0 := time.Now().Add(lead)
	plans := make([]builtin.BenchPlan, n)
	urls := make([]string, n)
	period := time.Duration(float64(time.Second) / o.rate)
	// Where a reply may begin: at a word, as a model's reply does (one that begins with "{"
	// is a structured response, which model-backed agents hold back until it ends).
	var starts []int
	for i, t := range builtin.BenchTokens(300) {
		if c := strings.TrimLeft(t, " "); c != "" && unicode.IsLetter(rune(c[0])) && i%7 == 0 {
			starts = append(starts, i)
		}
	}
	for i := range plans {
		// Replies start spread over one token's time, each at its own place in the reply.
		plans[i] = builtin.BenchPlan{Start: t0.Add(period * time.Duration(i) / time.Duration(n)), Rate: o.rate, Tokens: tokens, From: starts[i%len(starts)]}
	}
	agentName := map[string]string{"scripted": "bench", "openai": "bench-model"}[backend]
	if err := forEach(n, 8, func(i int) error {
		if backend == "bare" {
			urls[i] = base + "/s?plan=" + url.QueryEscape(plans[i].String())
			return nil
		}
		var err error
		urls[i], err = openConversation(ctx, client, base, benchPerson(i), agentName, plans[i].String())
		return err
	}); err != nil {
		return r, fmt.Errorf("%s: %w\n%s", backend, err, server.tail())
	}
	streams := make([]*benchStream, n)
	rctx, cancel := context.WithTimeout(ctx, time.Until(t0)+time.Duration(o.seconds*float64(time.Second))+60*time.Second)
	defer cancel()
	reader, err := newEpollReader()
	if err != nil {
		return r, err
	}
	for i := range streams {
		streams[i] = newBenchStream(plans[i])
		if err := reader.add(rctx, urls[i], streams[i], func(s *benchStream) bool { return s.done }); err != nil {
			return r, fmt.Errorf("%s: stream %d: %w", backend, i, err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		reader.run(rctx)
	}()
	// The CPU counts from the first token due to the end of the last reply.
	time.Sleep(time.Until(t0))
	if o.profile != "" && backend != "bare" {
		server.cmd.Process.Signal(syscall.SIGUSR1)
	}
	cpu0, self0 := procCPU(server.pid()), selfCPU()
	var peer0 time.Duration
	if peer != nil {
		peer0 = procCPU(peer.pid())
	}
	wg.Wait()
	r.cpu, r.self = procCPU(server.pid())-cpu0, selfCPU()-self0
	if o.profile != "" && backend != "bare" {
		server.cmd.Process.Signal(syscall.SIGUSR2)
	}
	if peer != nil {
		r.peer = procCPU(peer.pid()) - peer0
	}
	_, r.peak = procMemory(server.pid())
	for _, s := range streams {
		r.lat = append(r.lat, s.lat...)
		r.delivered += s.next
		r.want += tokens
		r.sse += s.bytes - s.lenBytes
		r.text += int64(s.got)
		if s.opened.After(t0) {
			r.late++
		}
		if s.err != nil {
			r.failed++
			if r.firstErr == nil {
				r.firstErr = s.err
			}
		}
	}
	slices.Sort(r.lat)
	if os.Getenv("PARLEY_BENCH_DEBUG") != "" {
		// The delay by second of the run: where the slow tokens are.
		per := int(o.rate)
		for sec := 0; sec*per < tokens; sec++ {
			var l []time.Duration
			for _, st := range streams {
				for i := sec * per; i < min((sec+1)*per, len(st.lat)); i++ {
					l = append(l, st.lat[i])
				}
			}
			slices.Sort(l)
			fmt.Fprintf(os.Stderr, "%s second %d: p50 %s p99 %s max %s\n", backend, sec, ms(pct(l, .5)), ms(pct(l, .99)), ms(pct(l, 1)))
		}
	}
	return r, nil
}

// forEach runs fn for 0..n-1 on workers goroutines and returns the first error.
func forEach(n, workers int, fn func(int) error) error {
	var mu sync.Mutex
	var first error
	next := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= n || stop {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

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
	dir, err := os.MkdirTemp("", "parley-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "parley.db")
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
