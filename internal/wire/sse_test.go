package wire_test

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/parley-chat/parley/internal/wire"
)

// events reads a whole stream; the last item is the error that ended it.
func events(r *wire.Reader) (got []string, err error) {
	for {
		ev, err := r.Next()
		if err != nil {
			return got, err
		}
		s := ev.Name + "|" + string(ev.Data)
		if ev.ID != "" {
			s += "|id " + ev.ID
		}
		if ev.Cut {
			s += "|cut"
		}
		got = append(got, s)
	}
}

// The reader reads the SSE format as browsers do: joined data lines, LF and CRLF, comments
// and other fields left, an event name, events without data dropped, and a last event
// without its blank line (marked cut).
func TestReader_Format(t *testing.T) {
	in := ": hi\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\n\ndata:{\"b\":2}\nid: 7\nretry: 10\n\n" +
		"event: skipped\n\ndata\ndata:  two spaces\n\ndata: {\"c\":3}"
	got, err := events(wire.NewReader(strings.NewReader(in), 1<<10))
	want := []string{"message|{\"a\":\n1}", `|{"b":2}|id 7`, "|\n two spaces", `|{"c":3}|cut`}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || !errors.Is(err, io.EOF) {
		t.Fatalf("got %q (%v), want %q", got, err, want)
	}
}

// A stream that arrives a byte at a time, with lines longer than the buffer, reads the same.
func TestReader_ByteAtATimeAndLongLines(t *testing.T) {
	long := strings.Repeat("x", 10000)
	in := "data: " + long + "\r\n\r\n: " + long + "\n\ndata: end\n\n"
	got, err := events(wire.NewReader(iotest.OneByteReader(strings.NewReader(in)), 20000))
	if len(got) != 2 || got[0] != "|"+long || got[1] != "|end" || !errors.Is(err, io.EOF) {
		t.Fatalf("got %d events (%v): %.40q", len(got), err, got)
	}
}

// An event, or a line, past the limit is an error naming the limit, not a stream held in
// memory without end.
func TestReader_TooLarge(t *testing.T) {
	for name, in := range map[string]string{
		"one line":   "data: " + strings.Repeat("x", 5000) + "\n\n",
		"many lines": strings.Repeat("data: "+strings.Repeat("x", 100)+"\n", 50) + "\n",
		"a comment":  ": " + strings.Repeat("x", 9000),
	} {
		_, err := events(wire.NewReader(strings.NewReader(in), 4<<10))
		var tl *wire.TooLargeError
		if !errors.As(err, &tl) || err.Error() != "an event is larger than 4 KiB" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A read error other than the end of the stream is returned as it is.
func TestReader_Error(t *testing.T) {
	boom := errors.New("connection reset")
	r := wire.NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 1<<10)
	got, err := events(r)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %q, %v", got, err)
	}
}

// Activity is called for every line, keep-alive comments included.
func TestReader_Activity(t *testing.T) {
	r := wire.NewReader(strings.NewReader(": ping\n\n: ping\n\ndata: x\n\n"), 1<<10)
	n := 0
	r.Activity = func() { n++ }
	got, _ := events(r)
	if len(got) != 1 || n != 6 {
		t.Fatalf("%d events, %d lines seen", len(got), n)
	}
}

// got is what a reader dispatched: an event, with the reconnection time then.
type got struct {
	Name, Data, ID, LastID string
	Retry                  string // in milliseconds, "-" when the stream set none
	Cut                    bool
}

func (g got) String() string {
	s := fmt.Sprintf("%s|%s|%s|%s|%s", g.Name, g.Data, g.ID, g.LastID, g.Retry)
	if g.Cut {
		s += "|cut"
	}
	return s
}

// readAll reads a whole stream with a Reader; err is the error that ended it.
func readAll(r *wire.Reader) (out []got, err error) {
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		retry := "-"
		if d, ok := r.Retry(); ok {
			retry = strconv.FormatInt(d.Milliseconds(), 10)
		}
		out = append(out, got{Name: ev.Name, Data: string(ev.Data), ID: ev.ID, LastID: ev.LastID, Retry: retry, Cut: ev.Cut})
	}
}

// chunks reads its chunks one Read each, then ends with end (io.EOF when nil).
type chunks struct {
	c   [][]byte
	end error
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.c) > 0 && len(c.c[0]) == 0 {
		c.c = c.c[1:]
	}
	if len(c.c) == 0 {
		if c.end != nil {
			return 0, c.end
		}
		return 0, io.EOF
	}
	n := copy(p, c.c[0])
	c.c[0] = c.c[0][n:]
	return n, nil
}

// rules are the WHATWG's rules for an event stream, a case each; an event is written
// name|data|id|last id|retry, "|cut" added for one whose blank line never came. FuzzSSE
// starts from these too, so that eventsource-parser agrees with each.
var rules = []struct {
	name, in string
	want     []string
}{
	{"LF", "data: a\n\n", []string{"|a|||-"}},
	{"CRLF", "data: a\r\n\r\n", []string{"|a|||-"}},
	{"CR", "data: a\r\rdata: b\r\r", []string{"|a|||-", "|b|||-"}},
	{"MixedLineEnds", "data: a\r\ndata: b\rdata: c\n\r\n", []string{"|a\nb\nc|||-"}},
	{"LFThenCRIsTwoEnds", "data: a\n\r", []string{"|a|||-"}},
	{"CRThenLFIsOneEnd", "data: a\r\ndata: b\r\n\n", []string{"|a\nb|||-"}},
	{"BlankLinesOnly", "\n\n\r\r\r\n", nil},
	{"Empty", "", nil},
	{"BOM", "\xef\xbb\xbfdata: a\n\n", []string{"|a|||-"}},
	{"BOMAlone", "\xef\xbb\xbf", nil},
	{"BOMBeforeABlankLine", "\xef\xbb\xbf\ndata: a\n\n", []string{"|a|||-"}},
	{"OneBOMOnly", "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n", []string{"|b|||-"}},
	{"BOMLater", "data: a\n\n\xef\xbb\xbfdata: b\n\n", []string{"|a|||-"}},
	{"HalfABOM", "\xef\xbbdata: a\n\ndata: b\n\n", []string{"|b|||-"}},
	{"Comments", ":\n: hi\n:data: x\n\ndata: a\n:data: b\n\n", []string{"|a|||-"}},
	{"FieldWithoutColon", "data\n\ndata\ndata\n\n", []string{"||||-", "|\n|||-"}},
	{"OneSpaceRemoved", "data:  two\ndata:none\ndata: \n\n", []string{"| two\nnone\n|||-"}},
	{"ColonInValue", "data: a: b\n\n", []string{"|a: b|||-"}},
	{"NamesAreCaseSensitive", "Data: x\ndata : y\nDATA:z\n\n", nil},
	{"UnknownField", "foo: bar\ndata: a\n\n", []string{"|a|||-"}},
	{"NUL", "data: a\x00b\n\n", []string{"|a\x00b|||-"}},
	{"EventName", "event: ping\ndata: a\n\ndata: b\n\n", []string{"ping|a|||-", "|b|||-"}},
	{"LastEventNameWins", "event: x\nevent:\ndata: a\n\nevent:y\nevent: z\ndata: b\n\n", []string{"|a|||-", "z|b|||-"}},
	{"NoDataNoEvent", "event: x\n\ndata: a\n\n", []string{"|a|||-"}},
	{"IDPersists", "id: 1\ndata: a\n\ndata: b\n\nid: 2\nid: 3\ndata: c\n\n", []string{"|a|1|1|-", "|b||1|-", "|c|3|3|-"}},
	{"IDOfABlockWithoutData", "id: 1\n\ndata: a\n\n", []string{"|a||1|-"}},
	{"EmptyIDResets", "id: 1\ndata: a\n\nid\ndata: b\n\ndata: c\n\n", []string{"|a|1|1|-", "|b|||-", "|c|||-"}},
	{"IDWithNULIgnored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\nid: \x00\ndata: c\n\n", []string{"|a|1|1|-", "|b||1|-", "|c||1|-"}},
	{"IDValueKeepsSpaces", "id:  7 \ndata: a\n\n", []string{"|a| 7 | 7 |-"}},
	{"Retry", "retry: 100\ndata: a\n\nretry: 0\ndata: b\n\n", []string{"|a|||100", "|b|||0"}},
	{"RetryNotDigits", "retry: 100\n\nretry: 1x\nretry:\nretry: -5\nretry: +5\nretry:  7\nretry: 7 \nretry: 1.5\ndata: a\n\n", []string{"|a|||100"}},
	{"RetryInABlockWithoutData", "retry: 5\n\ndata: a\n\n", []string{"|a|||5"}},
	{"RetryPastDuration", "retry: 99999999999999999999999\ndata: a\n\n", []string{"|a|||9223372036854"}},
	{"DataLines", "data: a\ndata:\ndata: b\n\n", []string{"|a\n\nb|||-"}},
	{"Cut", "data: a\n\ndata: b\ndata: c", []string{"|a|||-", "|b\nc|||-|cut"}},
	{"CutAfterLineEnd", "data: a\r", []string{"|a|||-|cut"}},
	{"CutWithoutData", "data: a\n\nid: 5", []string{"|a|||-"}},
}

// Each rule holds whole, a byte at a time, and with lines longer than the buffer.
func TestReader_Rules(t *testing.T) {
	for _, tt := range rules {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]func() *wire.Reader{
				"whole":      func() *wire.Reader { return wire.NewReader(strings.NewReader(tt.in), 1<<10) },
				"byte":       func() *wire.Reader { return wire.NewReader(iotest.OneByteReader(strings.NewReader(tt.in)), 1<<10) },
				"tinyBuffer": func() *wire.Reader { return wire.NewReaderSize(strings.NewReader(tt.in), 1<<10, 3) },
			}
			for how, r := range readers {
				evs, err := readAll(r())
				var s []string
				for _, e := range evs {
					s = append(s, e.String())
				}
				if !errors.Is(err, io.EOF) || !reflect.DeepEqual(s, tt.want) {
					t.Errorf("%s: got %q (%v), want %q", how, s, err, tt.want)
				}
			}
		})
	}
}

// errWouldWait is a stream with nothing more to read yet.
var errWouldWait = errors.New("the reader asked for more than the event")

// An event is returned once its blank line has arrived, without reading further: a CR that
// ends it is not held back to see whether a LF follows, and a LF that follows is then part
// of that line end.
func TestReader_ReadsNoFurtherThanTheEvent(t *testing.T) {
	stream := []string{"data: a\n\n", "data: b\r\r", "data: c\r\n\r\n", "data: d\n\r", "\ndata: e\r", "\n\r",
		":", " ping\r", "\n", "data: f\r", "\ndata: g\r", "\r"}
	want := [][]string{{"|a|||-"}, {"|b|||-"}, {"|c|||-"}, {"|d|||-"}, nil, {"|e|||-"}, nil, nil, nil, nil, nil, {"|f\ng|||-"}}
	for n := range stream {
		c := &chunks{end: errWouldWait}
		for _, s := range stream[:n+1] {
			c.c = append(c.c, []byte(s))
		}
		evs, err := readAll(wire.NewReader(c, 1<<10))
		var s []string
		for _, e := range evs {
			s = append(s, e.String())
		}
		var all []string
		for _, w := range want[:n+1] {
			all = append(all, w...)
		}
		if !errors.Is(err, errWouldWait) || !reflect.DeepEqual(s, all) {
			t.Errorf("after %q: got %q (%v), want %q", stream[:n+1], s, err, all)
		}
	}
	// A byte-order mark that arrives a byte at a time is still skipped.
	evs, err := readAll(wire.NewReader(&chunks{c: [][]byte{{0xef}, {0xbb}, {0xbf}, []byte("data: a\n\n")}}, 1<<10))
	if len(evs) != 1 || evs[0].Data != "a" || !errors.Is(err, io.EOF) {
		t.Errorf("a split byte-order mark: got %v (%v)", evs, err)
	}
}

// BenchmarkReader reads a model's stream: an event a token, each a line of JSON.
func BenchmarkReader(b *testing.B) {
	chunk := `data: {"id":"chatcmpl-CkvQ2Yq8rL0aT1xJp3uTQ4mWbZnEf","object":"chat.completion.chunk","created":1764201610,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}` + "\n\n"
	stream := strings.Repeat(chunk, 1000)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := wire.NewReader(strings.NewReader(stream), 1<<20)
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		if n != 1000 {
			b.Fatal(n)
		}
	}
}
