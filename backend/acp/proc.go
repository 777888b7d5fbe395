package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/child"
)

// proc is one process of the agent, serving one conversation with one session.
type proc struct {
	a    *Agent
	conv int64
	// root is the workspace of the conversation's person.
	root *workspace
	cmd  *exec.Cmd
	in   io.WriteCloser
	conn *sdk.ClientSideConnection
	log  *child.LogWriter
	caps sdk.AgentCapabilities

	exited chan struct{} // closed once the process ended
	why    error         // why it ended, set before exited closes

	// Under a.mu:
	busy    bool        // a step uses it
	idle    *time.Timer // ends it once idle for IdleAfter
	evicted bool        // ended to make room for another conversation's

	mu      sync.Mutex
	session string // the ACP session, once opened
	turn    *turn  // the step's turn, while a prompt runs
	stopped bool
}

// start starts a process of the agent for the conversation and initializes it. A process
// that started and failed to initialize is returned with the error: it is killed, and
// counted out once it has ended (see gone).
func (a *Agent) start(ctx context.Context, conv int64, root *workspace) (*proc, error) {
	stderr := &child.LogWriter{Log: a.log.With("conversation", conv), Says: "coding agent says"}
	cmd := child.Command(child.Spec{Command: a.cfg.Command, Args: a.cfg.Args, Dir: root.dir, Env: a.cfg.Env, Stderr: stderr})
	cmd.WaitDelay = 2 * time.Second // within Close's closeWait
	p := &proc{a: a, conv: conv, root: root, cmd: cmd, exited: make(chan struct{}), log: stderr}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// The agent's output through a pipe of our own: Wait does not close it under the
	// reader, which reads to the end of what the agent wrote.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = outW
	// Started under a.mu, so that Close (which sets closed under it, then waits for wg)
	// sees every process that starts.
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		outR.Close()
		outW.Close()
		return nil, errors.New("Parley is stopping")
	}
	err = cmd.Start()
	if err == nil {
		a.wg.Add(1)
	}
	a.mu.Unlock()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("could not start %s: %w", a.cfg.Command, err)
	}
	outW.Close()
	p.in = in
	p.conn = sdk.NewClientSideConnection(&client{p: p}, in, outR)
	p.conn.SetLogger(a.log.With("conversation", conv))
	go func() {
		defer a.wg.Done()
		err := cmd.Wait()
		child.KillGroup(cmd) // what the agent started goes with it
		outR.Close()
		p.mu.Lock()
		stopped := p.stopped
		p.mu.Unlock()
		switch {
		case stopped:
			p.why = errors.New("Parley ended the agent's process")
		case err != nil:
			p.why = fmt.Errorf("the agent's process ended (%v)", err)
		default:
			p.why = errors.New("the agent's process ended")
		}
		if tail := p.log.Tail(); tail != "" && !stopped {
			p.why = fmt.Errorf("%w; it said: %s", p.why, domain.OneLine(tail))
		}
		close(p.exited)
		a.gone(p)
		if !stopped {
			a.log.Warn("a coding agent's process ended", "conversation", conv, "error", p.why)
		}
	}()

	// Its start ends with the step, after StartTimeout, or with Close.
	ictx, cancel := context.WithTimeoutCause(ctx, a.cfg.StartTimeout, fmt.Errorf("the agent did not answer initialize within %s", a.cfg.StartTimeout))
	defer cancel()
	defer context.AfterFunc(a.ctx, cancel)()
	res, err := call(ictx, p, func(ctx context.Context) (sdk.InitializeResponse, error) {
		return p.conn.Initialize(ctx, sdk.InitializeRequest{
			ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientCapabilities: sdk.ClientCapabilities{
				Fs:          sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
				Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}},
			},
			ClientInfo: &sdk.Implementation{Name: "parley", Title: sdk.Ptr("Parley"), Version: "1"},
		})
	})
	if err != nil {
		p.kill()
		return p, fmt.Errorf("initialize: %w", err)
	}
	if res.ProtocolVersion != sdk.ProtocolVersionNumber {
		p.kill()
		return p, fmt.Errorf("the agent speaks ACP version %d; Parley speaks version %d", res.ProtocolVersion, sdk.ProtocolVersionNumber)
	}
	p.caps = res.AgentCapabilities
	if res.AgentInfo != nil {
		name := res.AgentInfo.Name
		if res.AgentInfo.Title != nil && *res.AgentInfo.Title != "" {
			name = *res.AgentInfo.Title
		}
		a.mu.Lock()
		a.name = name
		a.mu.Unlock()
	}
	return p, nil
}

// call makes a request of the agent and waits for its answer, the end of ctx, or the end
// of the process (its reason then the error).
func call[T any](ctx context.Context, p *proc, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		v, err := f(cctx)
		ch <- result{v, err}
	}()
	var zero T
	select {
	case r := <-ch:
		if r.err != nil && p.ended() {
			return zero, p.why
		}
		return r.v, rpcError(r.err)
	case <-p.exited:
		return zero, p.why
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	}
}

// rpcError says an agent's JSON-RPC error in its own words.
func rpcError(err error) error {
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Message
	if d, ok := re.Data.(map[string]any); ok {
		for _, k := range []string{"details", "message", "error"} {
			if s, ok := d[k].(string); ok && s != "" && s != msg {
				msg += ": " + s
				break
			}
		}
	}
	if re.Code == -32000 {
		msg += " (the agent needs to be signed in on the server, or its API key set in env)"
	}
	return errors.New(domain.OneLine(msg))
}

// dead reports whether the process ended.
func (p *proc) dead() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// isStopped reports whether Parley ended the process (it may not be gone yet).
func (p *proc) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// disconnected reports whether the process's output ended (it is ending).
func (p *proc) disconnected() bool {
	select {
	case <-p.conn.Done():
		return true
	default:
		return false
	}
}

// ended waits a little for a process whose output ended to be gone, and reports whether
// it is: its reason (p.why) then says why a request failed better than the connection can.
func (p *proc) ended() bool {
	if !p.disconnected() {
		return false
	}
	select {
	case <-p.exited:
		return true
	case <-time.After(closeWait):
		return false
	}
}

// stop asks the process to end: its input closes (ACP agents end with it), then its group
// gets SIGTERM; Close kills what is left.
func (p *proc) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	_ = p.in.Close()
	go func() {
		select {
		case <-p.exited:
			return
		case <-time.After(500 * time.Millisecond):
		}
		child.TermGroup(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(closeWait):
			child.KillGroup(p.cmd)
		}
	}()
}

// kill ends the process and its group at once.
func (p *proc) kill() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	child.KillGroup(p.cmd)
}

// setTurn routes what the agent sends to the step's turn (nil: none runs).
func (p *proc) setTurn(t *turn) {
	p.mu.Lock()
	p.turn = t
	p.mu.Unlock()
}

func (p *proc) current() *turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.turn
}

// acquire gives the step the conversation's process: the one it has, or one started for it
// when fewer than MaxSessions run, or else the first one freed (a process idle in another
// conversation is ended to make room). wait is told, once, what the step waits for.
func (a *Agent) acquire(ctx context.Context, conv int64, root *workspace, wait func(string)) (*proc, error) {
	waited := false
	for {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			return nil, errors.New("Parley is stopping")
		}
		if p := a.procs[conv]; p != nil && p.dead() {
			delete(a.procs, conv) // gone counts it out
		} else if p != nil && (p.disconnected() || p.isStopped()) {
			// Its output ended: the process is ending, and gone forgets it once it has.
			a.mu.Unlock()
			select {
			case <-p.exited:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			continue
		}
		if p := a.procs[conv]; p != nil && !p.busy {
			p.busy = true
			if p.idle != nil {
				p.idle.Stop()
				p.idle = nil
			}
			a.mu.Unlock()
			return p, nil
		}
		if a.procs[conv] == nil && a.running < a.cfg.MaxSessions {
			a.running++
			a.mu.Unlock()
			p, err := a.start(ctx, conv, root)
			a.mu.Lock()
			if err != nil {
				if p == nil {
					a.running-- // it never started: gone will not count it out
				}
				if ctx.Err() == nil && !a.closed {
					a.problem = err.Error()
				}
				a.signalLocked()
				a.mu.Unlock()
				return nil, err
			}
			a.problem = ""
			p.busy = true
			a.procs[conv] = p
			if a.closed {
				a.mu.Unlock()
				p.stop()
				return nil, errors.New("Parley is stopping")
			}
			a.mu.Unlock()
			return p, nil
		}
		what := "the conversation's agent process, still ending its last turn"
		if a.procs[conv] == nil {
			what = fmt.Sprintf("a free process of the agent (all %d are in use)", a.cfg.MaxSessions)
			// Make room, unless a process ended for it is still ending: end one that no
			// conversation uses now.
			if a.running-a.evicting >= a.cfg.MaxSessions {
				for _, p := range a.procs {
					if !p.busy {
						delete(a.procs, p.conv)
						if p.idle != nil {
							p.idle.Stop()
						}
						p.evicted = true
						a.evicting++
						go p.stop()
						break
					}
				}
			}
		}
		freed := a.freed
		a.mu.Unlock()
		if !waited && wait != nil {
			wait(what)
		}
		waited = true
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// release gives the process back once the step ended: it is kept for the conversation's
// next message, and ended once idle for IdleAfter. One that was ended goes at once.
func (a *Agent) release(p *proc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p.busy = false
	if a.procs[p.conv] == p && (p.dead() || p.isStopped()) {
		delete(a.procs, p.conv)
	}
	if a.procs[p.conv] == p {
		var t *time.Timer
		t = time.AfterFunc(a.cfg.IdleAfter, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if p.idle == t && !p.busy && a.procs[p.conv] == p {
				delete(a.procs, p.conv)
				go p.stop()
			}
		})
		p.idle = t
	}
	a.signalLocked()
}

// gone forgets a process that ended.
func (a *Agent) gone(p *proc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.procs[p.conv] == p {
		delete(a.procs, p.conv)
	}
	if p.idle != nil {
		p.idle.Stop()
	}
	if p.evicted {
		a.evicting--
	}
	a.running--
	a.signalLocked()
}

// signalLocked wakes the steps that wait for a process.
func (a *Agent) signalLocked() {
	close(a.freed)
	a.freed = make(chan struct{})
}
