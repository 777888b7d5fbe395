package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/backend/acp"
	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/httpserve"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/demo"
)

// runMCPDemo serves the demo MCP tool server: over stdio (an agent's command), or over
// Streamable HTTP with --http. Its sign-in pages are served on --pages (over HTTP, next to
// the endpoint).
func runMCPDemo(ctx context.Context, args []string, stdio stdio) error {
	fs := flag.NewFlagSet("mcp-demo", flag.ContinueOnError)
	fs.SetOutput(stdio.err)
	addr := fs.String("http", "", "serve Streamable HTTP at this address (such as 127.0.0.1:8091) instead of stdio; the endpoint is /mcp")
	pages := fs.String("pages", "127.0.0.1:0", "address of the sign-in pages, over stdio")
	step := fs.Duration("step", 200*time.Millisecond, "pause between two steps of count_slowly")
	stateful := fs.Bool("stateful", false, "over HTTP, a stateful handler: it speaks MCP 2025-11-25 and asks in the middle of a call")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := demo.New(demo.Options{Step: *step})
	if *addr == "" {
		base, stop, err := s.ServePages(*pages)
		if err != nil {
			return fmt.Errorf("mcp-demo: pages: %w", err)
		}
		defer stop()
		fmt.Fprintln(stdio.err, "parley mcp-demo: serving over stdio; sign-in pages at", base)
		return s.Run(ctx, &sdk.StdioTransport{})
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("mcp-demo: %w", err)
	}
	base := "http://" + l.Addr().String()
	s.SetPages(base)
	fmt.Fprintln(stdio.err, "parley mcp-demo: serving Streamable HTTP at", base+"/mcp")
	h := s.Handler()
	if *stateful {
		h = s.StatefulHandler()
	}
	return httpserve.Until(ctx, &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, l)
}

// children are what Parley runs beside its agents and must end when it stops: the tool
// servers of model-backed agents, the processes of coding agents.
type children interface {
	Close()
	Problems() []string
}

// startTools starts the tool servers of the model-backed agents, and gives them up to five
// seconds to be ready before Parley serves. A URL interaction that a
// server says is complete answers the question that waits for it, as the server. Coding
// agents start their processes on demand: they are returned too, to be closed.
func startTools(agents []domain.Agent, runner *runner.Runner, log *slog.Logger) []children {
	var pools []*toolserver.Pool
	var out []children
	for _, a := range agents {
		if ca, ok := a.(*acp.Agent); ok {
			ca.SetLogger(log)
			out = append(out, ca)
			continue
		}
		oa, ok := a.(*openai.Agent)
		if !ok || oa.Tools() == nil {
			continue
		}
		p := oa.Tools()
		p.SetLogger(log)
		p.OnComplete(func(server string, questionID int64) {
			ctx := context.Background()
			rec, err := runner.Question(ctx, questionID)
			if err == nil {
				_, err = runner.Answer(ctx, rec, url.Values{}, nil, domain.Actor{Name: toolserver.Asker(server)})
			}
			if err != nil && domain.ErrorCode(err) != domain.ECONFLICT {
				log.Error("answer a completed URL question", "question", questionID, "error", err)
			}
		})
		p.Start()
		pools = append(pools, p)
		out = append(out, p)
	}
	// The first messages find the tools there: wait a little for the servers to start.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range pools {
		_ = p.WaitReady(ctx)
	}
	return out
}
