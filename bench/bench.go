// Package bench is `parley bench`: it measures Parley's streams, answers, pages and memory
// against bare and fake peers, running Parley and the peers as child processes.
package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/store"
	"golang.org/x/sync/errgroup"
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
	// db is the PostgreSQL database to run on (a new schema each run), "" for SQLite;
	// instances is how many Parley processes serve it (2: the conversations start on the
	// first and are read from the second, so that every token crosses the database).
	db        string
	instances int
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
	backends := fs.String("backends", "scripted,openai", "agents that write: scripted (in Parley), openai (a fake OpenAI-compatible model over HTTP) and/or agui (a fake AG-UI agent over HTTP)")
	fs.IntVar(&o.answers, "answers", 200, "conversations answering a question at once (0 skips)")
	fs.IntVar(&o.idle, "idle", 10000, "idle streams held for the memory figure (0 skips)")
	fs.IntVar(&o.page, "page", 2000, "messages of the conversation whose page is timed (0 skips)")
	fs.StringVar(&o.db, "db", "", "a postgres:// URL to run Parley on PostgreSQL (a new schema each run); default a new SQLite file")
	fs.IntVar(&o.instances, "instances", 1, "Parley processes on the one database (2 needs --db): conversations start on the first and stream from the second")
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
		if b = strings.TrimSpace(b); b != "scripted" && b != "openai" && b != "agui" {
			return o, fmt.Errorf("--backends: %q is not scripted, openai or agui", b)
		}
		o.backends = append(o.backends, b)
	}
	if o.db != "" && !store.IsPostgres(o.db) {
		return o, fmt.Errorf("--db %q: a postgres:// URL", o.db)
	}
	if o.instances < 1 || o.instances > 2 || o.instances == 2 && o.db == "" {
		return o, errors.New("--instances: 1, or 2 with --db")
	}
	if o.rate <= 0 || o.seconds <= 0 {
		return o, errors.New("--rate and --seconds must be positive")
	}
	return o, nil
}

// Run is `parley bench`: it runs this binary's `parley serve` and `parley bench-serve` (see
// ServePeer) as child processes, and writes its figures on out, flag errors and help on stderr.
func Run(ctx context.Context, args []string, out, stderr io.Writer) error {
	o, err := parseBench(args, stderr)
	if err != nil {
		return err
	}
	tokens := int(o.rate * o.seconds)
	fmt.Fprintf(out, "parley bench: %d CPUs, replies of %d tokens (%.1f bytes each on average) at %g tokens/s, on %s, %d instance(s)\n\n",
		runtime.NumCPU(), tokens, avgTokenBytes(tokens), o.rate, benchDescribe(o), o.instances)
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
	var server, second, peer *child
	var err error
	lead := 2*time.Second + time.Duration(n)*8*time.Millisecond
	switch backend {
	case "bare":
		if server, err = startChild([]string{"bench-serve", "bare"}, nil); err != nil {
			return r, err
		}
	default:
		var env []string
		switch backend {
		case "openai":
			if peer, err = startChild([]string{"bench-serve", "model"}, nil); err != nil {
				return r, err
			}
			defer peer.stop()
			env = append(env, "PARLEY_OPENAI_BASE_URL=http://"+peer.addr+"/v1", "PARLEY_OPENAI_MODEL=bench-model")
		case "agui":
			if peer, err = startChild([]string{"bench-serve", "agui"}, nil); err != nil {
				return r, err
			}
			defer peer.stop()
			config, err := benchAGUIConfig(peer.addr)
			if err != nil {
				return r, err
			}
			defer os.Remove(config)
			env = append(env, "PARLEY_CONFIG="+config)
		}
		db, clean, err := benchDatabase(o)
		if err != nil {
			return r, err
		}
		defer clean()
		if server, err = startParley(db, o, fmt.Sprintf("%s-%d", backend, n), env...); err != nil {
			return r, err
		}
		if o.instances == 2 {
			if second, err = startParley(db, o, fmt.Sprintf("%s-%d-b", backend, n), env...); err != nil {
				server.stop()
				return r, err
			}
			defer second.stop()
		}
	}
	defer server.stop()
	base := "http://" + server.addr
	readBase := base
	if second != nil {
		readBase = "http://" + second.addr
	}
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
	agentName := map[string]string{"scripted": "bench", "openai": "bench-model", "agui": "bench-agui"}[backend]
	if err := forEach(n, 8, func(i int) error {
		if backend == "bare" {
			urls[i] = base + "/s?plan=" + url.QueryEscape(plans[i].String())
			return nil
		}
		path, err := startConversation(ctx, client, base, benchPerson(i), agentName, plans[i].String())
		if err != nil {
			return err
		}
		urls[i], err = streamURL(ctx, client, readBase, benchPerson(i), path)
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
	// With two instances, Parley's CPU and memory are both processes'.
	parleyCPU := func() time.Duration {
		d := procCPU(server.pid())
		if second != nil {
			d += procCPU(second.pid())
		}
		return d
	}
	cpu0, self0 := parleyCPU(), selfCPU()
	var peer0 time.Duration
	if peer != nil {
		peer0 = procCPU(peer.pid())
	}
	wg.Wait()
	r.cpu, r.self = parleyCPU()-cpu0, selfCPU()-self0
	if o.profile != "" && backend != "bare" {
		server.cmd.Process.Signal(syscall.SIGUSR2)
	}
	if peer != nil {
		r.peer = procCPU(peer.pid()) - peer0
	}
	_, r.peak = procMemory(server.pid())
	if second != nil {
		_, peak := procMemory(second.pid())
		r.peak += peak
	}
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

// benchAGUIConfig writes an agents file with the agent "bench-agui", the fake AG-UI agent at addr.
func benchAGUIConfig(addr string) (string, error) {
	f, err := os.CreateTemp("", "parley-bench-*.toml")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "[[agents]]\nname = \"bench-agui\"\nbackend = \"agui\"\nurl = \"http://%s/agent\"\n", addr)
	return f.Name(), err
}

// forEach runs fn for 0..n-1 on at most workers goroutines and returns the first error.
func forEach(n, workers int, fn func(int) error) error {
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}
