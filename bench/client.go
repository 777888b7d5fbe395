package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parley-chat/parley/backend/builtin"
)

// benchStream reads one conversation stream the way the browser does, and accounts for the
// text it brings: when each token of the plan arrived, how many bytes the stream took.
type benchStream struct {
	plan builtin.BenchPlan
	ends []int // where token i ends in the text
	// base is the text that came before the plan's reply (none for a new conversation).
	got   int // text bytes of the reply received
	next  int // first token not received yet
	lat   []time.Duration
	bytes int64
	// lenBytes are the bytes of the text lengths the bench asks for (?n=1), which the page
	// does not get.
	lenBytes int64
	done     bool
	question int64
	// mark is set (unix ns) when the benchmark answers; first is when text came after it.
	mark, first atomic.Int64
	opened      time.Time
	err         error
}

func newBenchStream(plan builtin.BenchPlan) *benchStream {
	s := &benchStream{plan: plan}
	n := 0
	for _, tok := range plan.Reply() {
		n += len(tok)
		s.ends = append(s.ends, n)
	}
	s.lat = make([]time.Duration, 0, plan.Tokens)
	return s
}

// textAt records that the reply had n bytes at now.
func (s *benchStream) textAt(n int, now time.Time) {
	if m := s.mark.Load(); m != 0 && s.first.Load() == 0 {
		s.first.Store(now.UnixNano())
	}
	s.got = n
	for s.next < len(s.ends) && s.ends[s.next] <= n {
		s.lat = append(s.lat, now.Sub(s.plan.At(s.next)))
		s.next++
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// follow reads the stream at u until doneWhen says so (or ctx ends).
func (s *benchStream) follow(ctx context.Context, u string, doneWhen func(*benchStream) bool) {
	body, err := openStream(ctx, u)
	if err != nil {
		s.err = err
		return
	}
	defer body.Close()
	s.opened = time.Now()
	br := bufio.NewReaderSize(countingReader{body, &s.bytes}, 16<<10)
	p := sseParser{s: s}
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if ctx.Err() == nil && !s.done {
				s.err = err
			}
			return
		}
		if p.line(bytes.TrimSuffix(line, []byte("\n")), time.Now()) && doneWhen(s) {
			return
		}
	}
}

// sseParser reads the lines of a stream into its benchStream. It understands the "datastar"
// events of Parley's streaming messages, and the <span> appends of Parley before them, so
// that the same harness measures both.
type sseParser struct {
	s      *benchStream
	event  []byte
	aLines int
	got    int
}

// line takes one line (without its line end) read at now, and reports the end of an event.
func (p *sseParser) line(line []byte, now time.Time) bool {
	s := p.s
	if len(line) == 0 {
		if p.got != s.got {
			s.textAt(p.got, now)
		}
		p.event, p.aLines = p.event[:0], 0
		return true
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "event":
		p.event = append(p.event[:0], value...)
	case "data":
		key, v, _ := bytes.Cut(value, []byte(" "))
		switch {
		case string(p.event) == "datastar":
			switch string(key) {
			case "a":
				if p.aLines > 0 {
					p.got++ // the line end between two lines of one value
				}
				p.aLines++
				p.got += len(v)
			case "n":
				p.got, _ = strconv.Atoi(string(v))
				s.lenBytes += int64(len(line) + 1)
			case "e":
				s.done = true
			}
		case string(key) == "elements":
			// A message of the agent's, whole or begun: the resumed reply shows.
			if bytes.Contains(v, []byte(`class="msg agent`)) && s.mark.Load() != 0 && s.first.Load() == 0 {
				s.first.Store(now.UnixNano())
			}
			// Parley before the "datastar" events: text came as <span> appends.
			if i := bytes.Index(v, []byte("<span>")); i >= 0 && bytes.Contains(v, []byte("msg agent")) || bytes.HasPrefix(v, []byte("<span>")) {
				t := v[i+len("<span>"):]
				if j := bytes.Index(t, []byte("</span>")); j >= 0 {
					p.got += len(html.UnescapeString(string(t[:j])))
				}
			}
			// The conversation's state badge (the sidebar's states are not its own).
			if bytes.Contains(v, []byte(`class="state state-done"`)) {
				s.done = true
			}
			if i := bytes.Index(v, []byte(`id="q-`)); i >= 0 {
				n, _ := strconv.ParseInt(string(bytes.TrimRight(v[i+6:i+6+bytes.IndexByte(v[i+6:], '"')], `"`)), 10, 64)
				s.question = n
			}
		}
	}
	return false
}

// openStream sends the request the browser sends for a stream, and returns the response's
// body. It speaks HTTP/1.1 itself, chunks included: net/http's client would cost the
// benchmark more CPU than what it measures, on the same cores.
func openStream(ctx context.Context, u string) (io.ReadCloser, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", pu.Host)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nDatastar-Request: true\r\nRemote-User: %s\r\n\r\n", pu.RequestURI(), pu.Host, personOf(pu))
	br := bufio.NewReaderSize(conn, 16<<10)
	status, err := br.ReadString('\n')
	if err != nil {
		conn.Close()
		return nil, err
	}
	if !strings.Contains(status, " 200 ") {
		conn.Close()
		return nil, fmt.Errorf("stream %s: %s", u, strings.TrimSpace(status))
	}
	chunked, closed := false, false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			conn.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.ToLower(strings.TrimSpace(v))
		chunked = chunked || strings.EqualFold(k, "Transfer-Encoding") && v == "chunked"
		closed = closed || strings.EqualFold(k, "Connection") && v == "close"
	}
	switch {
	case chunked:
		return &dechunk{r: br, c: conn, stop: stop}, nil
	case closed:
		return &untilClose{r: br, c: conn, stop: stop}, nil
	}
	conn.Close()
	return nil, fmt.Errorf("stream %s: neither chunked nor ended by close", u)
}

// untilClose reads the body of a response ended by closing the connection.
type untilClose struct {
	r    *bufio.Reader
	c    net.Conn
	stop func() bool
}

func (u *untilClose) Read(p []byte) (int, error) { return u.r.Read(p) }

func (u *untilClose) Close() error {
	u.stop()
	return u.c.Close()
}

// dechunk reads the body of a chunked HTTP/1.1 response.
type dechunk struct {
	r    *bufio.Reader
	c    net.Conn
	stop func() bool
	left int
}

func (d *dechunk) Read(p []byte) (int, error) {
	for d.left == 0 {
		line, err := d.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		size, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("chunk size %q", size)
		}
		if n == 0 {
			return 0, io.EOF
		}
		d.left = int(n)
	}
	n, err := d.r.Read(p[:min(len(p), d.left)])
	d.left -= n
	if d.left == 0 && err == nil {
		_, err = d.r.Discard(2) // the chunk's CRLF
	}
	return n, err
}

func (d *dechunk) Close() error {
	d.stop()
	return d.c.Close()
}

// procCPU is the CPU time (user + system) the process has used.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // clock ticks of 10 ms
}

// procMemory returns the resident set size and its peak, in bytes.
func procMemory(pid int) (rss, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			peak = n << 10
		}
	}
	return rss, peak
}

// selfCPU is the CPU time the benchmark itself has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchClient is the HTTP client of the benchmark: many connections to one host, no
// compression, no timeouts (streams last).
func benchClient() *http.Client {
	return &http.Client{
		Transport: asPerson{&http.Transport{MaxIdleConns: 0, MaxIdleConnsPerHost: 20000, MaxConnsPerHost: 0, DisableCompression: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Parley runs behind a "proxy" that names the person: each reply of a run is a person's of
// their own, as when many people chat at once (one person's pages share the sidebar's
// updates). The person a request is made as rides in its URL's fragment, which is never
// sent; "bench" when there is none.
type asPerson struct{ http.RoundTripper }

func (t asPerson) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Remote-User", personOf(r.URL))
	return t.RoundTripper.RoundTrip(r)
}

func personOf(u *url.URL) string {
	if u.Fragment != "" {
		return u.Fragment
	}
	return "bench"
}

// benchPerson is the person of a run's i-th conversation.
func benchPerson(i int) string { return fmt.Sprintf("bench-%d", i) }

var afterID = regexp.MustCompile(`stream\?after=(\d+)(?:&amp;v=(\d+))?`)

// openConversation starts a conversation as a person does in the browser: the form's post,
// then its page, whose stream begins after the last event the page shows. It returns the
// stream's URL, asking for text lengths.
func openConversation(ctx context.Context, client *http.Client, base, person, agentName, text string) (string, error) {
	path, err := startConversation(ctx, client, base, person, agentName, text)
	if err != nil {
		return "", err
	}
	return streamURL(ctx, client, base, person, path)
}

// streamURL loads a conversation's page, as a browser does, and returns the stream the page
// opens: from the last event the page shows.
func streamURL(ctx context.Context, client *http.Client, base, person, path string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"#"+person, nil)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := afterID.FindSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("%s: no stream on the page (%s)", path, resp.Status)
	}
	u := base + path + "/stream?n=1&after=" + string(m[1])
	if len(m[2]) > 0 {
		u += "&v=" + string(m[2]) // what the page saw of the person's conversations
	}
	return u + "#" + person, nil
}

// startConversation asks Parley for a conversation with agent and returns its path.
func startConversation(ctx context.Context, client *http.Client, base, person, agentName, text string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/conversations#"+person,
		strings.NewReader(url.Values{"agent": {agentName}, "text": {text}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return "", fmt.Errorf("POST /conversations: %s", resp.Status)
	}
	return resp.Header.Get("Location"), nil
}
