// Package acp is the back end for coding agents that speak the Agent Client Protocol (ACP,
// agentclientprotocol.com) over stdio: Gemini CLI, Claude (claude-agent-acp), Codex,
// goose, OpenCode and the others. Parley is the agent's client, as an editor would be.
//
// Each running conversation has a process of the agent of its own (at most MaxSessions),
// started on demand with one ACP session in the workspace (Cwd), kept while the person
// goes on, and ended when idle. A person's message is a session/prompt; the agent's text
// streams into the conversation, its tool calls become tool cards, its plan the plan view.
// When it asks (session/request_permission, elicitation/create), the question goes into
// the ledger and the turn waits for the answer on the live connection: if the process or
// Parley ends first, the question expires with that reason, and the next message starts a
// new session (session/load restores the old one where the agent can). The agent reads
// and writes files through Parley only inside the workspace.
package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/child"
)

// Defaults of Config.
const (
	DefaultMaxSessions = 4
	DefaultIdleAfter   = 10 * time.Minute
	DefaultAskTimeout  = time.Hour
	// DefaultStartTimeout bounds starting the agent and opening its session (npx may
	// fetch the agent first).
	DefaultStartTimeout = 2 * time.Minute
	// DefaultIdleTimeout allows for a command the agent runs itself, silent, for a while.
	DefaultIdleTimeout = 15 * time.Minute
)

// maxMaxSessions bounds max_sessions: each session is a process.
const maxMaxSessions = 64

// Config describes one coding agent, as an operator declares it.
type Config struct {
	// Name identifies the agent in URLs and the ledger; Title and Description are shown in
	// the picker (the agent's own name, once it started, fills in a missing title).
	Name, Title, Description string
	// Command is run with Args in Cwd, with the few variables children get plus Env.
	Command string
	Args    []string
	Env     map[string]string
	// Cwd is the workspace: the sessions' working directory, and the only place the agent
	// reads and writes files through Parley. A path element {person} in it (as in
	// /srv/parley/work/{person}) gives each person a workspace of their own, named after
	// their account and made with mode 0700 on first use: two people's sessions never
	// share one.
	Cwd string
	// MaxSessions bounds the agent's processes, one per running conversation; 0 is
	// DefaultMaxSessions.
	MaxSessions int
	// IdleAfter is how long a conversation's process is kept once its turn ended; 0 is
	// DefaultIdleAfter.
	IdleAfter time.Duration
	// AskTimeout is how long a permission request or a form waits for the person before it
	// expires (the agent is told "cancelled"); 0 is DefaultAskTimeout, negative never.
	AskTimeout time.Duration
	// AllowEmail lets the agent's forms ask for email addresses.
	AllowEmail bool
	// StartTimeout bounds starting a process (initialize) and opening its session; 0 is
	// DefaultStartTimeout. An agent that takes longer is ended.
	StartTimeout time.Duration
	// IdleTimeout is how long a turn may go without a word from the agent (while no
	// question of it waits for the person) before it is cancelled; 0 is
	// DefaultIdleTimeout, negative never.
	IdleTimeout time.Duration
	Logger      *slog.Logger
}

// Check reports what is wrong with the settings, naming the setting.
func (c Config) Check() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return errors.New("name is required")
	case strings.TrimSpace(c.Command) == "":
		return errors.New("command is required for an acp agent (the agent's own command, such as gemini --experimental-acp)")
	case strings.TrimSpace(c.Cwd) == "":
		return errors.New("cwd is required for an acp agent: the workspace its sessions work in, the only place it may read and write files")
	case !filepath.IsAbs(c.Cwd):
		return fmt.Errorf("cwd %q must be an absolute path", c.Cwd)
	case c.MaxSessions < 0 || c.MaxSessions > maxMaxSessions:
		return fmt.Errorf("max_sessions must be between 1 and %d", maxMaxSessions)
	case c.IdleAfter < 0:
		return errors.New("idle_timeout must not be negative")
	}
	base, perPerson, err := splitPerson(c.Cwd)
	if err != nil {
		return err
	}
	st, err := os.Stat(base)
	switch {
	case err != nil:
		return fmt.Errorf("cwd: %v", err)
	case !st.IsDir():
		return fmt.Errorf("cwd %q is not a directory", base)
	case perPerson && st.Mode().Perm()&0o002 != 0:
		return fmt.Errorf("cwd: %s, under which each person's workspace is made, must not be writable by everyone", base)
	}
	return nil
}

// personElement is the path element of a cwd that names each person's own workspace.
const personElement = "{person}"

// splitPerson reads a cwd: the directory that must exist (all of it, or the part before
// its {person} element), and whether it gives each person a workspace of their own.
func splitPerson(cwd string) (base string, perPerson bool, err error) {
	cwd = filepath.Clean(cwd)
	if !strings.Contains(cwd, personElement) {
		return cwd, false, nil
	}
	parts := strings.Split(cwd, string(filepath.Separator))
	at := -1
	for i, p := range parts {
		switch {
		case p == personElement && at < 0:
			at = i
		case strings.Contains(p, personElement):
			return "", false, fmt.Errorf("cwd %q: {person} must be a whole path element, once (as in /srv/parley/work/{person})", cwd)
		}
	}
	return filepath.Join(string(filepath.Separator), filepath.Join(parts[:at]...)), true, nil
}

// Agent is a domain.Agent backed by a coding agent's processes.
type Agent struct {
	cfg Config
	log *slog.Logger
	// root is the workspace, or with {person} in Cwd, nil, and roots each person's, under
	// base (the part of Cwd before {person}).
	root  *workspace
	roots map[string]*workspace
	base  string

	ctx    context.Context // ends with Close
	cancel context.CancelFunc

	mu       sync.Mutex
	procs    map[int64]*proc // by conversation
	running  int             // processes started or starting
	evicting int             // of them, ended to make room and still ending
	freed    chan struct{}   // closed (and replaced) when a process is freed or ends
	closed   bool
	wg       sync.WaitGroup
	name     string // the agent's own name (agentInfo), once one started
	problem  string // why the last process could not start, for the home page
}

// New checks cfg and returns the agent. No process starts before the first message.
func New(cfg Config) (*Agent, error) {
	cfg.Name = strings.TrimSpace(cfg.Name)
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("agent %q: %w", cfg.Name, err)
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.IdleAfter == 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.AskTimeout == 0 {
		cfg.AskTimeout = DefaultAskTimeout
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	a := &Agent{cfg: cfg, log: log.With("agent", cfg.Name), roots: map[string]*workspace{}, procs: map[int64]*proc{}, freed: make(chan struct{})}
	if base, perPerson, _ := splitPerson(cfg.Cwd); perPerson {
		a.base = base
	} else {
		root, err := openWorkspace(cfg.Cwd)
		if err != nil {
			return nil, fmt.Errorf("agent %q: cwd: %w", cfg.Name, err)
		}
		a.root = root
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a, nil
}

// SetLogger sets the logger (before the first step).
func (a *Agent) SetLogger(l *slog.Logger) { a.log = l.With("agent", a.cfg.Name) }

// Info describes the agent in the picker.
func (a *Agent) Info() domain.Info {
	info := domain.Info{Name: a.cfg.Name, Title: a.cfg.Title, Description: a.cfg.Description}
	a.mu.Lock()
	defer a.mu.Unlock()
	if info.Title == "" {
		info.Title = a.name
	}
	if info.Title == "" {
		info.Title = info.Name
	}
	if info.Description == "" && a.root == nil {
		info.Description = "A coding agent working in a folder of your own under " + a.base + "."
	} else if info.Description == "" {
		info.Description = "A coding agent working in " + a.cfg.Cwd + "."
	}
	return info
}

// Problems says why the agent could not start last time, for the home page.
func (a *Agent) Problems() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.problem == "" {
		return nil
	}
	return []string{fmt.Sprintf("agent %q (%s): %s", a.cfg.Name, a.cfg.Command, a.problem)}
}

// closeWait bounds Close: a process not gone by then is killed with its group.
const closeWait = 3 * time.Second

// Close ends every process of the agent, within closeWait: each is asked to stop (its input
// closes, then SIGTERM to its group), and killed with its group if it has not.
func (a *Agent) Close() {
	defer a.closeWorkspaces() // once no process is left to read or write in them
	a.mu.Lock()
	a.closed = true
	procs := make([]*proc, 0, len(a.procs))
	for _, p := range a.procs {
		procs = append(procs, p)
	}
	a.signalLocked() // steps waiting for a process learn that none comes
	a.mu.Unlock()
	a.cancel()
	for _, p := range procs {
		p.stop()
	}
	if child.Wait(&a.wg, closeWait) {
		return
	}
	a.log.Warn("coding agent processes still running; killing them", "after", closeWait.String())
	for _, p := range procs {
		p.kill()
	}
	a.wg.Wait()
}

func (a *Agent) closeWorkspaces() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.root != nil {
		a.root.root.Close()
	}
	for _, w := range a.roots {
		w.root.Close()
	}
}

// workspace is the workspace of the person's conversations: the one of the agent, or with
// {person} in Cwd, theirs, made (mode 0700) the first time they need it.
func (a *Agent) workspace(person string) (*workspace, error) {
	if a.root != nil {
		return a.root, nil
	}
	if err := domain.CheckUserName(person); err != nil || filepath.Base(person) != person {
		return nil, fmt.Errorf("the account name %q cannot name a workspace", person)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.roots[person]; w != nil {
		return w, nil
	}
	dir := strings.Replace(filepath.Clean(a.cfg.Cwd), personElement, person, 1)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the workspace %s: %w", dir, err)
	}
	w, err := openWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s: %w", dir, err)
	}
	a.roots[person] = w
	return w, nil
}
