// Package mcptest starts the demo tool server and pools of it for tests.
package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/demo"
)

// HTTPDemo serves the demo over Streamable HTTP, its pages beside it, until the test ends;
// wrap, if not nil, wraps its handler (to check what Parley sends, say).
func HTTPDemo(t testing.TB, name string, wrap func(http.Handler) http.Handler) (toolserver.ServerConfig, *demo.Server) {
	t.Helper()
	s := demo.New(demo.Options{Step: 10 * time.Millisecond})
	h := s.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s.SetPages(srv.URL)
	return toolserver.ServerConfig{Name: name, URL: srv.URL + "/mcp"}, s
}

// StatefulHTTPDemo serves the demo over a stateful Streamable HTTP handler, which speaks
// MCP 2025-11-25: its tools then ask in the middle of the call (elicitation/create).
func StatefulHTTPDemo(t testing.TB, name string) toolserver.ServerConfig {
	t.Helper()
	s := demo.New(demo.Options{Step: 10 * time.Millisecond})
	srv := httptest.NewServer(s.StatefulHandler())
	t.Cleanup(srv.Close)
	s.SetPages(srv.URL)
	return toolserver.ServerConfig{Name: name, URL: srv.URL + "/mcp"}
}

// Pool starts a pool of the servers for the agent "helper", waits until each was tried
// once, and closes it when the test ends.
func Pool(t testing.TB, servers ...toolserver.ServerConfig) *toolserver.Pool {
	t.Helper()
	return PoolWith(t, toolserver.Options{Servers: servers}, nil)
}

// PoolWith is Pool with more options; before, if not nil, is called before the pool starts
// (to set OnComplete, say).
func PoolWith(t testing.TB, opts toolserver.Options, before func(*toolserver.Pool)) *toolserver.Pool {
	t.Helper()
	opts.Agent = "helper"
	if opts.Retry == 0 {
		opts.Retry = 50 * time.Millisecond
	}
	p, err := toolserver.NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(p)
	}
	p.Start()
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

// Everything is the MCP project's reference server, @modelcontextprotocol/server-everything
// as package.json pins it, over stdio; an error says what is missing (node, or npm ci).
func Everything(name string) (toolserver.ServerConfig, error) {
	root, err := Root()
	if err != nil {
		return toolserver.ServerConfig{}, err
	}
	return Node(name, filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio")
}

// Node is a tool server that node runs from script (made with the packages of package.json),
// over stdio; an error says what is missing (node, the script, or npm ci).
func Node(name, script string, args ...string) (toolserver.ServerConfig, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return toolserver.ServerConfig{}, fmt.Errorf("the tool server needs node: %w", err)
	}
	root, err := Root()
	if err != nil {
		return toolserver.ServerConfig{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		return toolserver.ServerConfig{}, fmt.Errorf("the MCP packages are not installed (run npm ci): %w", err)
	}
	script, err = filepath.Abs(script)
	if err != nil {
		return toolserver.ServerConfig{}, err
	}
	if _, err := os.Stat(script); err != nil {
		return toolserver.ServerConfig{}, err
	}
	return toolserver.ServerConfig{Name: name, Command: "node", Args: append([]string{script}, args...)}, nil
}

// Root is the repository's folder (see backendtest.Root).
func Root() (string, error) { return backendtest.Root() }

// Children returns the processes whose parent is parent and whose command line holds
// match (Linux: read from /proc; elsewhere none).
func Children(parent int, match string) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		f := procStat(pid)
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if len(f) > 1 && err == nil && f[1] == strconv.Itoa(parent) && strings.Contains(string(cmdline), match) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Alive reports whether the process runs (a zombie has ended; its parent has not read its
// status yet).
func Alive(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z"
}

// procStat is /proc/PID/stat after the command's name: the state, the parent, and so on.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
}
