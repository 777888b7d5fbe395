// Package chat is `parley chat`, the terminal client: it talks to a Parley server over the
// JSON API (the wire types of package api) with a personal access token, prints the
// conversation as it streams (Markdown rendered on a terminal), and asks the agent's
// questions field by field, or answers them from piped input or a file of answers.
package chat

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"

	"github.com/parley-chat/parley/domain"
)

// chatOptions is what `parley chat` is told by its flags, the environment and its config file.
type chatOptions struct {
	Server       string
	Token        string
	Agent        string
	Conversation int64
	Message      string
	Answers      string
	ListAgents   bool
	// MessageGiven is true when Message came from the command line (it may be empty).
	MessageGiven bool
}

// The exit codes of parley chat, beyond 0 and 1 (an error).
const (
	ExitNoScript   = 3   // a question came with no scripted answer left, or after piped input ended
	ExitRejected   = 4   // --answers: the server refused a scripted answer
	ExitRunFailed  = 5   // the run failed or was stopped (with --answers, or input not a terminal)
	ExitLeftOver   = 6   // --answers: the run ended with scripted answers left unused
	ExitInterrupt  = 130 // Ctrl-C
	ExitTerminate  = 143 // SIGTERM
	defaultServer  = "http://127.0.0.1:8080"
	chatConfigName = "parley/chat.toml"
)

const chatUsage = `usage: parley chat [flags] [MESSAGE]

Chat with an agent from the terminal, over Parley's JSON API. Without --conversation it
starts a conversation with MESSAGE (or --message, or what you type at the you> prompt).
The server comes from --server, PARLEY_URL (or its older name PARLEY_SERVER) or the config
file, and the token from PARLEY_TOKEN or the config file (keys server and token); make one with
` + "`parley token add NAME --user YOU`" + ` or on the settings page.

When the agent asks, each field is prompted in turn; an empty line takes the default.
Ctrl-D at a question declines it, Ctrl-C stops the agent (twice, or when idle, quits).
At the you> prompt: /retry; /regenerate, another answer to your last message; /edit TEXT,
your last message says TEXT instead and is answered again (/edit alone lists your messages,
/edit #N TEXT edits the Nth); /good or /bad [WHAT WAS WRONG], your opinion of the last
reply; /stop; /quit. When standard input is not a terminal, answers
are read one line per field (a multi-line text ends with a line holding only "."). When
that input ends, the questions pending are declined and parley chat exits once the run
settles; a question asked after that is left pending (exit 3).

--answers FILE (JSON or YAML) runs unattended:
  message: Plan a team offsite in Chicago   # the first message
  answers:                                  # one entry per question, in order
    - {city: Chicago, guests: 20}           # values by field name (a file field: a path,
    - {choice: other, other: The lake}      #   relative to the answers file)
    - decline: not now                      # declines the question, with the reason
    - cancel: true                          # cancels the question

Exit codes: 0 done; 1 an error (flags, server, token; or a message not sent, with
--answers or when input is not a terminal); 3 a question had no scripted answer, or came
after the input ended (it is left pending); 4 the server refused a scripted answer; 5 the
run failed or was stopped (with --answers, or when input is not a terminal); 6 the run
ended with scripted answers unused; 130 Ctrl-C; 143 SIGTERM.

Flags:`

// stdio is where parley chat reads and writes: what the person types on in, the
// conversation on out, notes and errors on err.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// Run is `parley chat`: args are what follows "chat" on the command line, getenv reads the
// environment. Exit codes other than 0 and 1 end the process here, since Run reports only
// errors.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	std := stdio{in: stdin, out: stdout, err: stderr}
	opts, err := parseChat(args, getenv, std.err)
	if err != nil {
		return err
	}
	code, err := chat(ctx, opts, std)
	if code <= 1 {
		return err
	}
	if err != nil {
		fmt.Fprintln(std.err, "parley chat:", err)
	}
	os.Exit(code)
	return nil
}

func parseChat(args []string, getenv func(string) string, stderr io.Writer) (chatOptions, error) {
	var o chatOptions
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, chatUsage)
		fs.PrintDefaults()
	}
	server := fs.String("server", "", "Parley's address (PARLEY_URL, or PARLEY_SERVER; default "+defaultServer+")")
	config := fs.String("config", "", "config file with server and token (default $XDG_CONFIG_HOME/"+chatConfigName+")")
	fs.StringVar(&o.Agent, "agent", "", "agent of a new conversation (default: the first listed)")
	fs.Int64Var(&o.Conversation, "conversation", 0, "go on with this conversation (its id)")
	fs.Func("message", "first message (or give it as the argument)", func(s string) error {
		o.Message, o.MessageGiven = s, true
		return nil
	})
	fs.StringVar(&o.Answers, "answers", "", "run unattended with the answers in this file (JSON or YAML)")
	fs.BoolVar(&o.ListAgents, "list-agents", false, "list the agents and exit")
	// Flags may come after the message too.
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		words, args = append(words, fs.Arg(0)), fs.Args()[1:]
	}
	if len(words) > 0 {
		if o.MessageGiven {
			return o, errors.New("give the message either as the argument or with --message")
		}
		o.Message, o.MessageGiven = strings.Join(words, " "), true
	}
	var file struct {
		Server string `toml:"server"`
		Token  string `toml:"token"`
	}
	path, explicit := *config, *config != ""
	if !explicit {
		path = defaultChatConfig(getenv)
	}
	if path != "" {
		if _, err := toml.DecodeFile(path, &file); err != nil && (explicit || !errors.Is(err, os.ErrNotExist)) {
			return o, fmt.Errorf("config %s: %w", path, err)
		}
	}
	// PARLEY_URL is the name docs/api.md's tour exports; PARLEY_SERVER, the older one, stays.
	o.Server = cmp.Or(*server, getenv("PARLEY_URL"), getenv("PARLEY_SERVER"), file.Server, defaultServer)
	if !strings.Contains(o.Server, "://") {
		o.Server = "http://" + o.Server
	}
	o.Server = strings.TrimRight(o.Server, "/")
	o.Token = strings.TrimSpace(cmp.Or(getenv("PARLEY_TOKEN"), file.Token))
	if o.Token == "" {
		return o, fmt.Errorf("no access token: make one with `parley token add NAME --user YOU` (or on the settings page), "+
			"then set PARLEY_TOKEN or put token = \"...\" in %s", cmp.Or(path, "$XDG_CONFIG_HOME/"+chatConfigName))
	}
	return o, nil
}

// defaultChatConfig is $XDG_CONFIG_HOME/parley/chat.toml, or ~/.config/parley/chat.toml.
func defaultChatConfig(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, chatConfigName)
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", chatConfigName)
}

// chat runs the command and returns its exit code.
func chat(ctx context.Context, o chatOptions, std stdio) (int, error) {
	// Ctrl-C is the session's to handle (stop the agent, or quit), not the context's.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	c := &chatClient{base: o.Server, token: o.Token, http: &http.Client{}}
	if o.ListAgents {
		agents, err := c.agents(ctx)
		if err != nil {
			return 1, err
		}
		for _, a := range agents {
			fmt.Fprintf(std.out, "%-24s %s\n", a.Name, cmp.Or(a.Description, a.Title))
		}
		return 0, nil
	}
	s := &session{c: c, ctx: ctx, out: std.out, errw: std.err, sent: map[string]bool{}, ours: map[int64]bool{}}
	if o.Answers != "" {
		script, err := loadAnswers(o.Answers)
		if err != nil {
			return 1, err
		}
		s.script = script
		if !o.MessageGiven && script.Message != "" {
			o.Message, o.MessageGiven = script.Message, true
		}
	}
	s.tty = isTerminal(std.in) && s.script == nil
	s.color = s.tty && isTerminal(std.out) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	s.md = chatMarkdown(isTerminal(std.out), os.Environ(), func() int { return columns(std.out) })
	me, err := c.me(ctx)
	if err != nil {
		return 1, err
	}
	s.me = me
	if s.script == nil {
		s.lines = readLines(std.in, s.tty)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	s.sigs = sigs
	s.events = make(chan sseEvent, 256)

	after := ""
	if o.Conversation != 0 {
		page, err := c.conversation(ctx, o.Conversation)
		if err != nil {
			return 1, err
		}
		s.showPage(page)
		after = strconv.FormatInt(page.LastEventID, 10)
		if o.MessageGiven {
			s.queued = &o.Message
		}
	} else {
		if code, err := s.start(o); errors.Is(err, errQuit) {
			return 0, nil
		} else if code != 0 || err != nil {
			return code, err
		}
	}
	go c.follow(ctx, s.conv.ID, after, s.events)
	return s.loop()
}

// start makes the conversation from the first message (given, or read at the prompt).
func (s *session) start(o chatOptions) (int, error) {
	name := o.Agent
	if name == "" {
		agents, err := s.c.agents(s.ctx)
		if err != nil {
			return 1, err
		}
		if len(agents) == 0 {
			return 1, errors.New("the server has no agents")
		}
		name = agents[0].Name
	}
	text := o.Message
	for strings.TrimSpace(text) == "" {
		if s.script != nil || o.MessageGiven {
			return 1, errors.New("give the first message: as the argument, with --message, or as message in the answers file")
		}
		if s.tty {
			s.note(fmt.Sprintf("Chatting with %s. /quit quits.", name))
		}
		line, err := s.readLine("you> ")
		if errors.Is(err, io.EOF) {
			return 0, errQuit
		}
		if err != nil {
			return s.exitCode(err)
		}
		if text = line; strings.TrimSpace(text) == "/quit" {
			return 0, errQuit
		}
	}
	key := domain.NewNonce()
	s.sent[key] = true
	conv, err := s.c.startConversation(s.ctx, name, text, key)
	if err != nil {
		return 1, err
	}
	s.conv = conv
	s.expect = true
	if !s.tty {
		s.line("you> " + text)
	}
	s.note(fmt.Sprintf("Conversation %d with %s: %s%s", conv.ID, cmp.Or(conv.AgentTitle, conv.Agent), s.c.base, conv.URL))
	return 0, nil
}

// Why a prompt ends without an answer.
var (
	errResolved  = errors.New("the question was resolved elsewhere")
	errInterrupt = errors.New("interrupted")
	errTerminate = errors.New("terminated")
	errDeleted   = errors.New("the conversation was deleted")
	errQuit      = errors.New("quit")
)

// exitCode maps the errors that end a session onto its exit code.
func (s *session) exitCode(err error) (int, error) {
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, errInterrupt):
		s.endStream()
		return ExitInterrupt, nil
	case errors.Is(err, errTerminate):
		s.endStream()
		return ExitTerminate, nil
	}
	return 1, err
}

// loop is the session: ask what is pending, wait while the agent works, and when all is
// quiet take the next message.
func (s *session) loop() (int, error) {
	for {
		if len(s.pending) > 0 {
			q := s.pending[0]
			if s.inputOver && !slices.Contains(s.declineAtEnd, q.ID) {
				return ExitNoScript, fmt.Errorf("question %d came after the input ended: it is left pending", q.ID)
			}
			code, err := s.ask(q)
			s.drop(q.ID)
			if code != 0 || err != nil {
				return s.finish(code, err)
			}
			continue
		}
		if s.busy() {
			if err := s.waitEvent(); err != nil {
				return s.exitCode(err)
			}
			continue
		}
		if s.queued != nil {
			text := *s.queued
			s.queued = nil
			if err := s.send(text); err != nil {
				if s.script != nil {
					return 1, err
				}
				s.notSent(err)
			}
			continue
		}
		if s.script != nil {
			return s.scriptEnd()
		}
		if s.inputOver {
			return s.finish(0, nil)
		}
		s.atYou = true
		line, err := s.readLine("you> ")
		s.atYou = false
		switch {
		case errors.Is(err, errWake):
			continue
		case errors.Is(err, io.EOF):
			return s.finish(0, nil)
		case err != nil:
			return s.exitCode(err)
		}
		if done := s.command(line); done {
			return s.finish(0, nil)
		}
	}
}

// finish ends the session: a message not sent is exit 1, and a failed run exit 5, when no
// person is there to see it and try again.
func (s *session) finish(code int, err error) (int, error) {
	if code != 0 {
		return code, err
	}
	if err != nil {
		return s.exitCode(err)
	}
	if s.unsent > 0 {
		return 1, fmt.Errorf("not sent: %d message(s) (see above)", s.unsent)
	}
	if err := s.runFailed(); err != nil && !s.tty {
		return ExitRunFailed, err
	}
	return 0, nil
}

// scriptEnd is the end of an unattended run: its exit code says how it went.
func (s *session) scriptEnd() (int, error) {
	if err := s.runFailed(); err != nil {
		return ExitRunFailed, err
	}
	if s.script.left() > 0 {
		return ExitLeftOver, fmt.Errorf("the run ended with %d scripted answers unused", s.script.left())
	}
	return 0, nil
}

// runFailed says how the last run ended if it failed, was stopped or was interrupted;
// otherwise it is nil.
func (s *session) runFailed() error {
	switch s.state {
	case "failed", "stopped", "interrupted":
		return fmt.Errorf("the run %s%s", s.state, prefixed(": ", s.runError))
	}
	return nil
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
