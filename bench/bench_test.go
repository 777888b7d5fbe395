package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/builtin"
)

func TestParseBench(t *testing.T) {
	o, err := parseBench(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := benchOptions{streams: []int{100, 250, 500, 1000, 1500}, rate: 50, seconds: 20, backends: []string{"scripted", "openai"},
		answers: 200, idle: 10000, page: 2000, instances: 1}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("defaults\n%+v\nwant\n%+v", o, want)
	}
	o, err = parseBench([]string{"--streams", "10, 20", "--backends", "agui", "--seconds", "3"}, io.Discard)
	if err != nil || !reflect.DeepEqual(o.streams, []int{10, 20}) || !reflect.DeepEqual(o.backends, []string{"agui"}) || o.seconds != 3 {
		t.Errorf("flags: %+v, %v", o, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--streams", "0"}, `--streams: "0" is not a number of streams`},
		{[]string{"--backends", "scripted,echo"}, `--backends: "echo" is not scripted, openai or agui`},
		{[]string{"--db", "./parley.db"}, "a postgres:// URL"},
		{[]string{"--instances", "2"}, "--instances: 1, or 2 with --db"},
		{[]string{"--rate", "0"}, "--rate and --seconds must be positive"},
	} {
		if _, err := parseBench(tt.args, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// plan is a fast reply that starts now, from its 7th token.
func plan(tokens int) builtin.BenchPlan {
	return builtin.BenchPlan{Start: time.Now(), Rate: 5000, Tokens: tokens, From: 7}
}

// checkRead says what is wrong with a stream that should have brought the whole plan.
func checkRead(t *testing.T, s *benchStream, p builtin.BenchPlan) {
	t.Helper()
	text := strings.Join(p.Reply(), "")
	if s.err != nil || !s.done || s.next != p.Tokens || len(s.lat) != p.Tokens || s.got != len(text) {
		t.Errorf("stream: err %v, done %t, %d of %d tokens (%d delays), %d of %d bytes", s.err, s.done, s.next, p.Tokens, len(s.lat), s.got, len(text))
	}
	if s.bytes == 0 || s.opened.IsZero() {
		t.Errorf("stream: %d bytes read, opened at %v", s.bytes, s.opened)
	}
}

// The bare peer's stream (a connection taken over, ended by close) is read token by token,
// by a reader a stream and by the one that reads them all.
func TestBareStreamIsReadTokenByToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(serveBare))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := func(p builtin.BenchPlan) string { return srv.URL + "/s?plan=" + url.QueryEscape(p.String()) }

	p := plan(200)
	s := newBenchStream(p)
	s.follow(ctx, u(p), func(s *benchStream) bool { return s.done })
	checkRead(t, s, p)

	reader, err := newEpollReader()
	if err != nil {
		t.Fatal(err)
	}
	plans, streams := make([]builtin.BenchPlan, 5), make([]*benchStream, 5)
	for i := range streams {
		plans[i] = plan(100 + i)
		streams[i] = newBenchStream(plans[i])
		if err := reader.add(ctx, u(plans[i]), streams[i], func(s *benchStream) bool { return s.done }); err != nil {
			t.Fatal(err)
		}
	}
	reader.run(ctx)
	for i, s := range streams {
		checkRead(t, s, plans[i])
	}
}

// A chunked stream, as net/http writes one, is read as well, and the lengths the bench asks
// for (?n=1) are counted apart.
func TestChunkedStreamIsRead(t *testing.T) {
	p := plan(50)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		n := 0
		for _, tok := range p.Reply() {
			n += len(tok)
			fmt.Fprintf(w, "event:datastar\ndata:a %s\n\n", strings.ReplaceAll(tok, "\n", "\ndata:a "))
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "event:datastar\ndata:n %d\ndata:e 1\n\n", n)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := newBenchStream(p)
	s.follow(ctx, srv.URL+"/c/1/stream", func(s *benchStream) bool { return s.done })
	checkRead(t, s, p)
	if s.lenBytes == 0 {
		t.Error("the length line is not counted apart")
	}
}

// sseData is the JSON of each data line of an SSE response.
func sseData(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("data %q: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

// The fake model and the fake AG-UI agent stream the plan of the person's last message.
func TestFakePeersStreamThePlan(t *testing.T) {
	p := plan(40)
	want := strings.Join(p.Reply(), "")
	messages := []map[string]any{{"role": "system", "content": "You are a bench."}, {"role": "user", "content": "Reply to: " + p.String()}}

	model := httptest.NewServer(http.HandlerFunc(serveModel))
	defer model.Close()
	body, _ := json.Marshal(map[string]any{"model": "bench-model", "stream": true, "messages": messages})
	resp, err := http.Post(model.URL+"/v1/chat/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	var usage any
	for _, m := range sseData(t, resp.Body) {
		for _, c := range m["choices"].([]any) {
			if s, ok := c.(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
				got.WriteString(s)
			}
		}
		if u, ok := m["usage"]; ok {
			usage = u.(map[string]any)["completion_tokens"]
		}
	}
	resp.Body.Close()
	if got.String() != want || usage != float64(p.Tokens) {
		t.Errorf("model: %q (completion tokens %v), want %q (%d)", got.String(), usage, want, p.Tokens)
	}

	agui := httptest.NewServer(http.HandlerFunc(serveAGUI))
	defer agui.Close()
	body, _ = json.Marshal(map[string]any{"threadId": "t1", "runId": "r1", "messages": messages})
	resp, err = http.Post(agui.URL+"/agent", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	got.Reset()
	var types []string
	for _, m := range sseData(t, resp.Body) {
		if m["type"] == "TEXT_MESSAGE_CONTENT" {
			got.WriteString(m["delta"].(string))
		} else {
			types = append(types, m["type"].(string))
		}
	}
	resp.Body.Close()
	if got.String() != want || !reflect.DeepEqual(types, []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END", "RUN_FINISHED"}) {
		t.Errorf("agui: %q, events %q; want %q", got.String(), types, want)
	}
}

// ServePeer prints its address on its first line and serves until its context ends.
func TestServePeer(t *testing.T) {
	if err := ServePeer(context.Background(), []string{"echo"}, io.Discard); err == nil || !strings.Contains(err.Error(), "usage: parley bench-serve") {
		t.Errorf("an unknown peer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServePeer(ctx, []string{"bare"}, w) }()
	addr, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	p := plan(20)
	s := newBenchStream(p)
	s.follow(ctx, "http://"+strings.TrimSpace(addr)+"/s?plan="+url.QueryEscape(p.String()), func(s *benchStream) bool { return s.done })
	checkRead(t, s, p)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServePeer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServePeer did not end with its context")
	}
}
