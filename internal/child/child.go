// Package child starts the programs Parley runs as children (local MCP tool servers, ACP
// coding agents): in a process group of their own that dies with Parley, with none of
// Parley's keys in their environment, and with what they write to stderr logged.
package child

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// passedEnv are the environment variables a child gets from Parley's own: what a program
// needs to run, and none of Parley's keys and tokens.
var passedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "SYSTEMROOT"}

// Env is the part of env a child gets: all of it when inherit, else passedEnv and the
// locale (LC_*).
func Env(env []string, inherit bool) []string {
	if inherit {
		return env
	}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(passedEnv, k) || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

// tailLines is how many of its last lines a LogWriter keeps.
const tailLines = 5

// LogWriter logs what a child writes to stderr, line by line, under Says ("tool server
// says"), and keeps the last lines: a child that fails says why there.
type LogWriter struct {
	Log  *slog.Logger
	Says string

	mu   sync.Mutex
	buf  []byte
	tail []string
}

func (w *LogWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.line(string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(b), nil
}

func (w *LogWriter) line(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	w.Log.Info(w.Says, "line", s)
	if len(w.tail) == tailLines {
		w.tail = slices.Delete(w.tail, 0, 1)
	}
	w.tail = append(w.tail, s)
}

// Tail returns the last lines the child wrote, joined.
func (w *LogWriter) Tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.tail, "\n")
}

// Wait waits for wg, at most d, and reports whether it was done: what Parley runs beside
// its agents closes within a bound, and what has not by then is killed.
func Wait(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Spec is a child to start: its program and arguments, the directory it runs in, the
// variables it gets beside the few every child gets (all of Parley's with Inherit), and
// where its stderr goes.
type Spec struct {
	Command string
	Args    []string
	Dir     string
	Env     map[string]string
	Inherit bool
	Stderr  io.Writer
}

// Command returns the command that starts the child as Parley starts every child: with
// its environment (see Env), under a guard (see Guard), in a process group of its own
// (see OwnGroup), and not held up in its end by a grandchild that keeps its stderr.
func Command(s Spec) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = Env(os.Environ(), s.Inherit)
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = s.Stderr
	cmd.WaitDelay = 5 * time.Second
	Guard(cmd)
	OwnGroup(cmd)
	return cmd
}
