package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"
)

// epollReader reads many streams on one goroutine, the way a load tool does (wrk): one
// epoll set, non-blocking reads of whatever is there. The benchmark shares the cores with what
// it measures; a goroutine a stream would cost it twice as much.
type epollReader struct {
	epfd  int
	conns map[int32]*rawStream
}

// rawStream is one stream's socket and its reading state: chunks, lines, events.
type rawStream struct {
	fd      int
	s       *benchStream
	p       sseParser
	done    func(*benchStream) bool
	chunked bool
	// chunk decoding: left bytes of data in the chunk, or -1 while reading a size line,
	// -2..-1 while skipping the CRLF after data
	left   int
	size   []byte
	skip   int
	line   []byte
	closed bool
}

func newEpollReader() (*epollReader, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &epollReader{epfd: fd, conns: map[int32]*rawStream{}}, nil
}

// add opens the stream at u and reads it from now on, until done says so.
func (e *epollReader) add(ctx context.Context, u string, s *benchStream, done func(*benchStream) bool) error {
	body, err := openStream(ctx, u)
	if err != nil {
		return err
	}
	s.opened = time.Now()
	var conn net.Conn
	var br *bufio.Reader
	chunked := false
	switch b := body.(type) {
	case *dechunk:
		conn, br, chunked = b.c, b.r, true
		b.stop()
	case *untilClose:
		conn, br = b.c, b.r
		b.stop()
	default:
		return errors.New("unknown body")
	}
	f, err := conn.(*net.TCPConn).File() // a descriptor of our own, in blocking mode
	conn.Close()
	if err != nil {
		return err
	}
	fd := int(f.Fd())
	nfd, err := syscall.Dup(fd)
	f.Close()
	if err != nil {
		return err
	}
	if err := syscall.SetNonblock(nfd, true); err != nil {
		syscall.Close(nfd)
		return err
	}
	r := &rawStream{fd: nfd, s: s, p: sseParser{s: s}, done: done, chunked: chunked, left: -1}
	// What the header's reader took already.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		r.feed(b, time.Now())
	}
	e.conns[int32(nfd)] = r
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(nfd)}
	return syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_ADD, nfd, &ev)
}

// run reads until every stream is done, or ctx ends.
func (e *epollReader) run(ctx context.Context) {
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 64<<10)
	open := 0
	for _, r := range e.conns {
		if !r.closed {
			open++
		}
	}
	for open > 0 && ctx.Err() == nil {
		n, err := syscall.EpollWait(e.epfd, events, 100)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return
		}
		now := time.Now()
		for _, ev := range events[:max(n, 0)] {
			r := e.conns[ev.Fd]
			if r == nil || r.closed {
				continue
			}
			for {
				k, err := syscall.Read(r.fd, buf)
				if k > 0 {
					r.feed(buf[:k], now)
				}
				if err == syscall.EAGAIN {
					break
				}
				if k <= 0 || err != nil {
					if !r.s.done && r.s.err == nil {
						r.s.err = fmt.Errorf("stream closed: %v", err)
					}
					r.closed = true
					break
				}
				if k < len(buf) {
					break
				}
			}
			if r.closed || r.finished() {
				r.closed = true
				open--
				syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_DEL, r.fd, nil)
				syscall.Close(r.fd)
			}
		}
	}
	e.close()
}

func (e *epollReader) close() {
	for _, r := range e.conns {
		if !r.closed {
			r.closed = true
			syscall.Close(r.fd)
		}
	}
	syscall.Close(e.epfd)
}

// finished reports whether the stream's reader is done with it.
func (r *rawStream) finished() bool { return r.done(r.s) && r.s.done }

// feed takes bytes of the response body (chunked or not), read at now.
func (r *rawStream) feed(b []byte, now time.Time) {
	for len(b) > 0 {
		if !r.chunked {
			r.payload(b, now)
			return
		}
		switch {
		case r.skip > 0:
			k := min(r.skip, len(b))
			r.skip -= k
			b = b[k:]
		case r.left < 0:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				r.size = append(r.size, b...)
				return
			}
			r.size = append(r.size, b[:i]...)
			b = b[i+1:]
			size, _ := strconv.ParseInt(trimChunkSize(r.size), 16, 64)
			r.size = r.size[:0]
			if size == 0 {
				return
			}
			r.left = int(size)
		default:
			k := min(r.left, len(b))
			r.payload(b[:k], now)
			r.left -= k
			b = b[k:]
			if r.left == 0 {
				r.left, r.skip = -1, 2
			}
		}
	}
}

// payload takes bytes of the SSE stream itself.
func (r *rawStream) payload(b []byte, now time.Time) {
	r.s.bytes += int64(len(b))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			r.line = append(r.line, b...)
			return
		}
		line := b[:i]
		if len(r.line) > 0 {
			r.line = append(r.line, line...)
			line = r.line
		}
		r.p.line(line, now)
		r.line = r.line[:0]
		b = b[i+1:]
	}
}

func trimChunkSize(b []byte) string {
	for i, c := range b {
		if c == ';' || c == '\r' || c == ' ' {
			return string(b[:i])
		}
	}
	return string(b)
}
