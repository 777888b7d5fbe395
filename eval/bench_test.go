package eval_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
	"github.com/parley-chat/parley/store/storetest"
)

// BenchmarkWrite writes 10,000 and 100,000 conversations (a message and a reply each, the
// reply rated) as JSON Lines, reporting the peak of the heap in use while it writes: it stays
// flat whatever the number of conversations, one conversation read at a time.
//
//	go test -tags sqlite_fts5 -run XXX -bench Write -benchtime 1x ./eval/
func BenchmarkWrite(b *testing.B) {
	storetest.SQLiteOnly(b)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("conversations=%d", n), func(b *testing.B) { benchWrite(b, n) })
	}
}

func benchWrite(b *testing.B, n int) {
	path := storetest.Path(b)
	db := storetest.Open(b, path)
	seed(b, path, n)
	b.ResetTimer()
	for range b.N {
		var peak atomic.Uint64
		done := make(chan struct{})
		go func() {
			var m runtime.MemStats
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}()
		start := time.Now()
		lines, err := eval.Write(ctx, io.Discard, db, eval.Filter{}, func(string) string { return "builtin" })
		close(done)
		if err != nil {
			b.Fatal(err)
		}
		if lines != n {
			b.Fatalf("%d lines; want %d", lines, n)
		}
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "lines/s")
	}
}

// seed puts n conversations straight into the database file: a person's message and an
// agent's reply each, the reply rated bad with a comment.
func seed(b *testing.B, path string, n int) {
	b.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_foreign_keys=on")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000000Z07:00")
	if _, err := tx.Exec(`INSERT INTO users (id, name, password, role, created_at) VALUES (1, 'ann', '', 'user', ?)`, at); err != nil {
		b.Fatal(err)
	}
	payload := func(ev domain.Event) string {
		p, _ := json.Marshal(ev)
		return string(p)
	}
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("Plan party number %d for 30 people in Lisbon, with a budget of $3000 and vegetarian options.", i)
		reply := fmt.Sprintf("Here is a plan for party %d: a venue by the river, a caterer with vegetarian menus, and a timeline for the evening.", i)
		steps := []struct {
			q    string
			args []any
		}{
			{`INSERT INTO conversations (id, agent, title, created_at, updated_at, user_id) VALUES (?, 'event-planner', ?, ?, ?, 1)`, []any{i, fmt.Sprintf("Party %d", i), at, at}},
			{`INSERT INTO runs (id, conversation_id, state, created_at, updated_at) VALUES (?, ?, 'done', ?, ?)`, []any{i, i, at, at}},
			{`INSERT INTO events (id, conversation_id, run_id, kind, payload, created_at) VALUES (?, ?, ?, 'user_message', ?, ?)`,
				[]any{2*i - 1, i, i, payload(domain.Event{Kind: domain.EventUserMessage, Author: "ann", Text: text}), at}},
			{`INSERT INTO events (id, conversation_id, run_id, kind, payload, created_at) VALUES (?, ?, ?, 'agent_message', ?, ?)`,
				[]any{2 * i, i, i, payload(domain.Event{Kind: domain.EventAgentMessage, MessageID: fmt.Sprint(i), Author: "Coordinator", Text: reply}), at}},
			{`INSERT INTO feedback (conversation_id, item, item_id, user_id, rating, comment, reasons, created_at, updated_at) VALUES (?, 'reply', ?, 1, 'bad', 'No dates.', '["wrong"]', ?, ?)`,
				[]any{i, 2 * i, at, at}},
		}
		for _, s := range steps {
			if _, err := tx.Exec(s.q, s.args...); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
