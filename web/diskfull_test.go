package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
)

// writer is an agent whose step waits for the reply it is to write.
func writer(reply <-chan string) *scripted {
	return &scripted{name: "writer", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		select {
		case text := <-reply:
			if err := out.Text(text); err != nil {
				return err
			}
			return out.EndMessage()
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
}

// The database stops taking writes in the middle of a step (a file system gone read-only, a
// disk so full that nothing fits): neither the reply nor the step's end can be stored. The
// conversation must not stay "running" with nothing running. While writes fail, /healthz
// says so and Retry and a new message explain why they cannot go on; once writes work again
// the step ends failed with the reason shown, by itself, and Retry works.
func TestWritesFail_StepEndsByItselfOnceTheyWork(t *testing.T) {
	storetest.SQLiteOnly(t) // the database file refuses writes or fills up
	ts, db, reply, later := writerServer(t)
	path := ts.start(t, "writer", "write a reply")
	id, ctx := convID(t, path), context.Background()

	if code, body := ts.get(t, "/healthz"); code != http.StatusOK {
		t.Fatalf("healthz before = %d %q", code, body)
	}
	if err := db.RefuseWrites(ctx, true); err != nil {
		t.Fatal(err)
	}
	reply <- "This reply cannot be stored."
	waitFor(t, "healthz to report the database not writable", func() bool {
		code, body := ts.get(t, "/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "cannot save to its database")
	})
	code, body, _ := ts.post(t, path+"/retry", nil)
	if code != http.StatusOK || !strings.Contains(body, "cannot save to its database") {
		t.Fatalf("retry while writes fail = %d %q, want the reason patched in", code, body)
	}
	code, body, _ = ts.post(t, path+"/messages", url.Values{"text": {"are you there?"}})
	if code != http.StatusOK || !strings.Contains(body, "cannot save to its database") || strings.Contains(body, "still working") {
		t.Fatalf("message while writes fail = %d %q, want the reason patched in", code, body)
	}

	if err := db.RefuseWrites(ctx, false); err != nil {
		t.Fatal(err)
	}
	ts.waitState(t, id, domain.StateFailed)
	if _, page := ts.get(t, path); !strings.Contains(page, "cannot save to its database") {
		t.Errorf("the page does not show why the step failed")
	}
	later(store.ProbeEvery) // a failed write stands that long
	waitFor(t, "healthz to recover", func() bool { code, _ := ts.get(t, "/healthz"); return code == http.StatusOK })

	if code, body, _ := ts.post(t, path+"/retry", nil); code != http.StatusNoContent {
		t.Fatalf("retry = %d %q", code, body)
	}
	reply <- "Stored this time."
	ts.waitState(t, id, domain.StateDone)
	if _, page := ts.get(t, path); !strings.Contains(page, "Stored this time.") {
		t.Errorf("the retried reply is not on the page")
	}
}

// A full disk: a reply too large for the room left fails the step at once, with the reason
// shown and Retry working; /healthz reports the failure, and recovers once there is room.
func TestDiskFull_StepFailsAndRetryWorks(t *testing.T) {
	storetest.SQLiteOnly(t) // the database file refuses writes or fills up
	ts, db, reply, later := writerServer(t)
	path := ts.start(t, "writer", "write a reply")
	id, ctx := convID(t, path), context.Background()

	if err := db.CapSize(ctx, true); err != nil {
		t.Fatal(err)
	}
	// A reply far larger than any free space in the database: its pages cannot be added.
	reply <- strings.Repeat("All work and no play makes Jack a dull boy. ", 12000)
	ts.waitState(t, id, domain.StateFailed)
	if _, page := ts.get(t, path); !strings.Contains(page, "database or disk is full") {
		t.Errorf("the page does not show why the step failed")
	}
	if code, body := ts.get(t, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "database or disk is full") {
		t.Errorf("healthz while full = %d %q", code, body)
	}

	if err := db.CapSize(ctx, false); err != nil {
		t.Fatal(err)
	}
	later(store.ProbeEvery) // a failed write stands that long
	waitFor(t, "healthz to recover", func() bool { code, _ := ts.get(t, "/healthz"); return code == http.StatusOK })
	if code, body, _ := ts.post(t, path+"/retry", nil); code != http.StatusNoContent {
		t.Fatalf("retry = %d %q", code, body)
	}
	reply <- "Stored this time."
	ts.waitState(t, id, domain.StateDone)
}

// writerServer serves the writer agent, whose replies the test sends, on a database whose
// clock later moves forward.
func writerServer(t testing.TB) (ts *testServer, db *store.DB, reply chan<- string, later func(time.Duration)) {
	db = newDB(t)
	var skew atomic.Int64
	db.Now = func() time.Time { return time.Now().UTC().Add(time.Duration(skew.Load())) }
	replies := make(chan string)
	return newTestServer(t, db, writer(replies)), db, replies, func(d time.Duration) { skew.Add(int64(d)) }
}

// waitFor polls cond until it holds, failing the test after a generous deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With local accounts, a database that takes no writes neither signs people out nor fails
// their pages: the last-seen time is written as best it can be. Signing out still signs the
// browser out, and says the session could not be ended.
func TestWritesFail_SessionsGoOn(t *testing.T) {
	storetest.SQLiteOnly(t) // the database file refuses writes or fills up
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	ctx := context.Background()
	if err := as.db.RefuseWrites(ctx, true); err != nil {
		t.Fatal(err)
	}
	as.clock.Add(2 * time.Minute) // the last-seen time is due to be written
	if code, body := ann.get("/"); code != http.StatusOK {
		t.Fatalf("a page with writes refused = %d %.200s", code, body)
	}
	code, body, h := ann.do(http.MethodPost, "/logout", url.Values{}, nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot save to its database") || !strings.Contains(h.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign-out with writes refused = %d %.200s, cookie %q", code, body, h.Get("Set-Cookie"))
	}
	if err := as.db.RefuseWrites(ctx, false); err != nil {
		t.Fatal(err)
	}
	if code, _ := ann.get("/"); code != http.StatusSeeOther {
		t.Errorf("after signing out, a page = %d, want the way to sign-in", code)
	}
}

// A reply cut off by an error while the disk is full, too large for the room left: the step's
// end is written without its text after a few tries, so the conversation ends failed while
// the disk is still full, rather than running on with nothing running.
func TestDiskFull_ACutOffReplyTooLargeStillEndsTheStep(t *testing.T) {
	storetest.SQLiteOnly(t) // the database file refuses writes or fills up
	db := newDB(t)
	ts := newTestServer(t, db, &scripted{name: "cut", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		if err := db.CapSize(ctx, true); err != nil {
			return err
		}
		if err := out.Text(strings.Repeat("All work and no play makes Jack a dull boy. ", 12000)); err != nil {
			return err
		}
		return errors.New("the model's stream broke off")
	}})
	path := ts.start(t, "cut", "write a long reply")
	ts.waitState(t, convID(t, path), domain.StateFailed)
	if _, page := ts.get(t, path); !strings.Contains(page, "the model") {
		t.Errorf("the page does not show why the step failed")
	}
	if err := db.CapSize(context.Background(), false); err != nil {
		t.Fatal(err)
	}
}
