package toolserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/mcptest"
)

// BenchmarkCall measures one call of a tool, Parley's side and the demo server's, over
// stdio and over Streamable HTTP.
func BenchmarkCall(b *testing.B) {
	cfg, _ := mcptest.HTTPDemo(b, "remote", nil)
	for _, c := range []struct {
		name string
		cfg  toolserver.ServerConfig
	}{{"stdio", stdioServer("demo")}, {"http", cfg}} {
		b.Run(c.name, func(b *testing.B) {
			p := mcptest.Pool(b, c.cfg)
			call := toolserver.Call{Server: c.cfg.Name, Tool: "lookup", Arguments: json.RawMessage(`{"word":"bench"}`)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Call(context.Background(), call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
