// Package httpserve serves an http.Server for as long as a context lasts: the commands that
// serve a peer or a demo (parley bench-serve, parley mcp-demo --http) share it.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// Until serves on l until ctx ends.
func Until(ctx context.Context, srv *http.Server, l net.Listener) error {
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
