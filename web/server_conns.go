package web

import (
	"net"
	"net/http"
	"sync"
)

// freshConns are the connections that have sent no request yet. http.Server.Shutdown waits
// up to 5 s for such a connection, in case its request is on its way; a client's transport
// may hold one it dialled and never used, which would then take the grace of a SIGTERM.
// Shutdown closes them instead: nothing was asked on them.
type freshConns struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// track is the http.Server's ConnState hook.
func (f *freshConns) track(c net.Conn, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case st == http.StateNew && f.closed:
		c.Close()
	case st == http.StateNew:
		if f.conns == nil {
			f.conns = map[net.Conn]struct{}{}
		}
		f.conns[c] = struct{}{}
	default:
		delete(f.conns, c)
	}
}

// close closes the connections that have sent nothing, and any accepted from now on.
func (f *freshConns) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for c := range f.conns {
		c.Close()
	}
	clear(f.conns)
}
