package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process the benchmark runs: Parley, or a peer.
type child struct {
	cmd   *exec.Cmd
	addr  string
	mu    sync.Mutex
	log   []string // the last lines it wrote
	clean func()   // removes what it leaves (its database), after it stops
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.log, "\n")
}

// keep collects the lines of r, the last 40, and sends the first that matches on found.
func (c *child) keep(r io.Reader, match *regexp.Regexp, found chan<- string) {
	if dir := os.Getenv("PARLEY_BENCH_LOG"); dir != "" {
		// Every line the children write, for a look at what they did (GODEBUG=gctrace=1, say).
		if f, err := os.OpenFile(filepath.Join(dir, "children.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			defer f.Close()
			r = io.TeeReader(r, f)
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.log = append(c.log, line)
		if len(c.log) > 40 {
			c.log = c.log[1:]
		}
		c.mu.Unlock()
		if m := match.FindStringSubmatch(line); m != nil && found != nil {
			found <- m[1]
			found = nil
		}
	}
}

// stop ends the child gracefully, then by force.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	if c.clean != nil {
		c.clean()
	}
}

var listening = regexp.MustCompile(`listening on http://([\d.:]+)`)

// startChild runs this binary with args and waits for its address: the "listening on" log
// line of parley serve, or the first line of bench-serve.
func startChild(args []string, env []string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(args[0], "/") {
		exe, args = args[0], args[1:]
	}
	c := &child{cmd: exec.Command(exe, args...)}
	c.cmd.Env = append(os.Environ(), env...)
	stdout, _ := c.cmd.StdoutPipe()
	stderr, _ := c.cmd.StderrPipe()
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	if args[0] == "bench-serve" {
		go c.keep(stdout, regexp.MustCompile(`^([\d.:]+)$`), found)
		go c.keep(stderr, listening, nil)
	} else {
		go c.keep(stdout, listening, nil)
		go c.keep(stderr, listening, found)
	}
	select {
	case c.addr = <-found:
		return c, nil
	case <-time.After(60 * time.Second):
		c.cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not start:\n%s", args[0], c.tail())
	}
}

// startParley serves Parley on the database at db (a new one, removed when it stops, if db
// is ""; see benchDatabase), with the bench agent and no sign-in, for as many streams and messages as the
// benchmark needs. PARLEY_BENCH_SERVER names another build of Parley to measure (an older
// one, say: it has only the openai backend).
func startParley(db string, o benchOptions, name string, env ...string) (*child, error) {
	var clean func()
	if db == "" {
		var err error
		if db, clean, err = benchDatabase(o); err != nil {
			return nil, err
		}
	}
	env = append(env, "PARLEY_BENCH_AGENT=1")
	if o.profile != "" {
		env = append(env, "PARLEY_CPUPROFILE="+filepath.Join(o.profile, name+".prof"))
	}
	// People are named by a trusted proxy: the harness (see asPerson).
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--auth", "proxy", "--trusted-proxies", "127.0.0.1/32",
		"--max-streams", "1000000", "--message-rate", "100000000"}
	if exe := os.Getenv("PARLEY_BENCH_SERVER"); exe != "" {
		args = append([]string{exe}, args...)
	}
	c, err := startChild(args, env)
	if err != nil {
		if clean != nil {
			clean()
		}
		return nil, err
	}
	c.clean = clean
	return c, nil
}
