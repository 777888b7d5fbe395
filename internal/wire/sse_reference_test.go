package wire_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/internal/wire"
)

// The reference is the eventsource-parser package (npm, pinned in package.json), a separate
// implementation of the WHATWG's rules for an event stream, run by node on
// testdata/eventsource-parser.mjs: one process for all the streams a test process reads.
var reference struct {
	sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	err error
}

// refEvent is an event as the reference dispatched it. A nil Type or ID is a field it did
// not have; Retry is the reconnection time then, nil when none was set.
type refEvent struct {
	Type, Data, ID []byte
	Retry          *float64
}

func TestMain(m *testing.M) {
	code := m.Run()
	reference.Lock()
	if reference.cmd != nil {
		_ = reference.in.Close()
		_ = reference.cmd.Wait()
	}
	reference.Unlock()
	os.Exit(code)
}

// startReference starts node on the reference's script; the caller holds the lock.
func startReference() error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("the reference reader needs node: %w", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "eventsource-parser.mjs"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join("..", "..", "node_modules", "eventsource-parser", "package.json")); err != nil {
		return fmt.Errorf("eventsource-parser is not installed (run npm ci): %w", err)
	}
	cmd := exec.Command("node", script)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	reference.cmd, reference.in, reference.out = cmd, in, bufio.NewReader(out)
	return nil
}

// referenceRead has the reference read a stream that arrives in the given chunks.
func referenceRead(chunks [][]byte) ([]refEvent, error) {
	reference.Lock()
	defer reference.Unlock()
	if reference.cmd == nil && reference.err == nil {
		reference.err = startReference()
	}
	if reference.err != nil {
		return nil, reference.err
	}
	req, err := json.Marshal(struct {
		Chunks [][]byte `json:"chunks"`
	}{chunks})
	if err != nil {
		return nil, err
	}
	if _, err := reference.in.Write(append(req, '\n')); err != nil {
		reference.err = fmt.Errorf("the reference stopped: %w", err)
		return nil, reference.err
	}
	line, err := reference.out.ReadBytes('\n')
	if err != nil {
		reference.err = fmt.Errorf("the reference stopped: %w", err)
		return nil, reference.err
	}
	var resp struct {
		Events []refEvent `json:"events"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("the reference answered %q: %w", line, err)
	}
	return resp.Events, nil
}

// cut splits a stream into chunks of the sizes cuts gives, in turn (1 to 32 bytes each);
// no cuts is one chunk.
func cut(stream, cuts []byte) [][]byte {
	if len(cuts) == 0 {
		return [][]byte{stream}
	}
	out := [][]byte{}
	for i := 0; len(stream) > 0; i++ {
		n := min(int(cuts[i%len(cuts)])%32+1, len(stream))
		out = append(out, stream[:n])
		stream = stream[n:]
	}
	return out
}

// maxRetry is the longest reconnection time a Reader keeps, in milliseconds.
const maxRetry = math.MaxInt64 / int64(time.Millisecond)

// FuzzSSE holds the Reader to the reference: on any bytes, arriving in chunks of any sizes
// and read through a buffer of any size, both dispatch the same events, with the same type,
// data, id and reconnection time. The rest of the rules hold as the reference reads them:
//   - an event whose blank line never came (the Reader's Cut) is no event to it, as the
//     standard says;
//   - it reports an event's own id field, not the last event ID: an id sent in a block
//     without data, which the standard keeps for the next events, it forgets. So the
//     Reader's LastID is compared where the event has an id of its own, and TestReader_Rules
//     holds the rest (IDPersists, IDOfABlockWithoutData);
//   - it reads a retry value as a JavaScript number, exact up to 2^53 ms, well past the
//     Reader's largest (maxRetry).
func FuzzSSE(f *testing.F) {
	for _, r := range rules {
		f.Add([]byte(r.in), []byte(nil), uint8(0))
		f.Add([]byte(r.in), []byte{0}, uint8(0))
	}
	// CRLF split between chunks, CR at the end of a chunk with more after it, a byte-order
	// mark split, lines longer than the buffer.
	f.Add([]byte("data: a\r\n\r\ndata: b\r\n\r\n"), []byte{6, 0, 1}, uint8(0))
	f.Add([]byte("data: a\n\rdata: b\r\r"), []byte{8, 0}, uint8(0))
	f.Add([]byte("\xef\xbb\xbfdata: a\n\n"), []byte{0, 1}, uint8(0))
	f.Add([]byte("id: 7\nevent: long\ndata: "+string(bytes.Repeat([]byte("x"), 100))+"\r\n\r\n"), []byte{5, 30}, uint8(2))
	f.Add([]byte(": ping\r\rretry: 10\rid:\x00\rdata\r\r"), []byte{2}, uint8(7))
	f.Fuzz(func(t *testing.T, stream, cuts []byte, size uint8) {
		parts := cut(stream, cuts)
		want, err := referenceRead(parts)
		if err != nil {
			t.Fatal(err)
		}
		r := wire.NewReaderSize(&chunks{c: cut(stream, cuts)}, 1<<20, 3+int(size)%64)
		got, err := readAll(r)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("%q: the Reader failed: %v", stream, err)
		}
		if n := len(got); n > 0 && got[n-1].Cut {
			got = got[:n-1]
		}
		if len(got) != len(want) {
			t.Fatalf("%q in %d chunks: the Reader dispatched %d events, the reference %d:\n%v\n%s", stream, len(parts), len(got), len(want), got, show(want))
		}
		for i, g := range got {
			w := want[i]
			retry := "-"
			if w.Retry != nil {
				retry = strconv.FormatInt(int64(min(*w.Retry, float64(maxRetry))), 10)
			}
			ok := g.Name == string(w.Type) && g.Data == string(w.Data) && g.ID == string(w.ID) && g.Retry == retry && !g.Cut
			if w.ID != nil && g.LastID != string(w.ID) {
				ok = false
			}
			if !ok {
				t.Fatalf("%q in %d chunks: event %d: the Reader dispatched %v, the reference %s", stream, len(parts), i, g, show(want[i:i+1]))
			}
		}
	})
}

// show writes the reference's events as got writes the Reader's: name|data|id|-|retry
// (nil fields as <none>).
func show(evs []refEvent) string {
	var b bytes.Buffer
	field := func(f []byte) string {
		if f == nil {
			return "<none>"
		}
		return string(f)
	}
	for _, e := range evs {
		retry := "-"
		if e.Retry != nil {
			retry = strconv.FormatFloat(*e.Retry, 'f', -1, 64)
		}
		fmt.Fprintf(&b, "%q ", field(e.Type)+"|"+string(e.Data)+"|"+field(e.ID)+"|-|"+retry)
	}
	return b.String()
}
