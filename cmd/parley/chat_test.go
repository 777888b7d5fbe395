package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/chat"
	"github.com/parley-chat/parley/chat/chattest"
	"github.com/parley-chat/parley/domain"
)

// term is `parley chat` under a pseudo-terminal, typed at as a person would.
type term struct {
	t      *testing.T
	cmd    *exec.Cmd
	pty    *os.File
	out    syncBuffer
	pos    int // how far expect has read (in the output without ANSI styles)
	copied chan struct{}
	exited chan struct{}
}

var ansiStyle = regexp.MustCompile("\x1b\\[[0-9;]*m")

func startTerm(t *testing.T, env []string, args ...string) *term {
	t.Helper()
	cmd := mainCommand(append([]string{"chat"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 60, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, cmd: cmd, pty: f, copied: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		io.Copy(&tm.out, f) // ends with EIO once the child is gone
		close(tm.copied)
	}()
	go func() {
		cmd.Wait()
		close(tm.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-tm.exited
		f.Close()
		<-tm.copied
	})
	return tm
}

// text is everything the terminal showed, without styles.
func (tm *term) text() string { return ansiStyle.ReplaceAllString(tm.out.String(), "") }

// expect waits until s shows after what was expected before.
func (tm *term) expect(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		text := tm.text()
		if i := strings.Index(text[tm.pos:], s); i >= 0 {
			tm.pos += i + len(s)
			return
		}
		select {
		case <-tm.copied:
			if !strings.Contains(tm.text()[tm.pos:], s) {
				tm.t.Fatalf("parley chat ended without showing %q; after the last match it showed:\n%s", s, tm.text()[tm.pos:])
			}
			continue
		default:
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("no %q within %s; after the last match the terminal shows:\n%s\n(all of it: %q)", s, waitLong, text[tm.pos:], text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answer waits for the field's prompt and types a line.
func (tm *term) answer(header, line string) {
	tm.t.Helper()
	tm.expect(header)
	tm.expect("> ")
	tm.send(line + "\r")
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// exitCode waits for the chat to end.
func (tm *term) exitCode() int {
	tm.t.Helper()
	select {
	case <-tm.exited:
	case <-time.After(waitLong):
		tm.t.Fatalf("parley chat did not exit; the terminal shows:\n%s", tm.text())
	}
	<-tm.copied
	return tm.cmd.ProcessState.ExitCode()
}

func TestChat_TerminalAnswersEveryFieldKind(t *testing.T) {
	l := live(t)
	agenda := filepath.Join(t.TempDir(), "agenda.txt")
	if err := os.WriteFile(agenda, []byte("9:00 coffee\n10:00 talks\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, l.chatEnv(t), "--agent", "fake", "every kind")
	tm.expect("Let me ask.")
	tm.expect("Tell me about the event.")
	tm.expect("- Note: a test of every field kind") // the context, as the Markdown export writes it
	tm.expect("Ctrl-D declines")
	tm.answer("Title — at most 40 characters", "Offsite")
	tm.expect("Notes (optional) — end with a line holding only \".\"")
	tm.expect("Anything else.")
	tm.expect("> ")
	tm.send("line one\r")
	tm.expect("line one\r\n  ") // the text area goes on
	tm.send("line two\r.\r")
	tm.answer("Budget (optional) — a number, between 0 and 10,000", "2500.5")
	tm.answer("Guests — a whole number, between 1 and 500", "600")
	tm.expect("Venue — a number from the list")
	tm.expect("1) Town hall")
	tm.answer("3) Something else", "3")
	tm.answer("Other venue (optional)", "The lake")
	tm.expect("Dietary needs (optional) — numbers separated by commas")
	tm.answer("3) gluten-free", "1, gluten-free")
	tm.answer("Outdoors (optional) — y or n", "y")
	tm.answer("Day (optional) — YYYY-MM-DD", "2031-05-17")
	tm.answer("Agenda (optional) — the path of a file", filepath.Join(t.TempDir(), "missing.txt"))
	tm.expect("Cannot read that file")
	tm.expect("> ")
	tm.send(agenda + "\r")
	// The server refuses the number of guests: only that field is asked again, with its message.
	tm.expect("Guests: Must be between 1 and 500.")
	tm.answer("Guests — a whole number, between 1 and 500", "42")
	tm.expect("Thanks, all noted.")
	tm.expect("you> ")

	qs := l.questions(t, tm.text())
	if len(qs) != 1 || qs[0].Resolution == nil || qs[0].Resolution.Outcome != "answered" {
		t.Fatalf("questions = %+v, want one answered", qs)
	}
	r := qs[0].Resolution
	doc, _ := r.Values["agenda"].(map[string]any)
	delete(r.Values, "agenda")
	want := map[string]any{"title": "Offsite", "notes": "line one\nline two", "budget": json.Number("2500.5"),
		"guests": json.Number("42"), "venue": "other", "other": "The lake", "dietary": []any{"vegetarian", "gluten-free"},
		"outdoor": true, "day": "2031-05-17"}
	if !reflect.DeepEqual(r.Values, want) {
		t.Errorf("values = %#v\nwant %#v", r.Values, want)
	}
	if doc["name"] != "agenda.txt" || doc["size"] != json.Number("24") {
		t.Errorf("the file field's value = %v, want the uploaded agenda.txt", doc)
	}
	if r.Via != "token laptop" {
		t.Errorf("via = %q, want the token's name", r.Via)
	}
	tm.send("\x04")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("Ctrl-D at you> exited %d, want 0", code)
	}
}

func TestChat_TerminalCtrlDDeclinesCtrlCQuits(t *testing.T) {
	l := live(t)
	tm := startTerm(t, l.chatEnv(t), "--agent", "fake", "one question")
	tm.expect("What is your name?")
	tm.expect("Your name")
	tm.expect("> ")
	tm.send("\x04")
	tm.expect("Reason for declining (optional): ")
	tm.send("not now\r")
	tm.expect("(declined)")
	tm.expect("Thanks, all noted.")
	tm.expect("you> ")
	qs := l.questions(t, tm.text())
	if len(qs) != 1 || qs[0].Resolution == nil || qs[0].Resolution.Outcome != "declined" || qs[0].Resolution.Reason != "not now" {
		t.Fatalf("questions = %+v, want one declined with the reason", qs)
	}
	tm.send("\x03")
	if code := tm.exitCode(); code != chat.ExitInterrupt {
		t.Fatalf("Ctrl-C at you> exited %d, want %d", code, chat.ExitInterrupt)
	}
}

func TestChat_TerminalCtrlCStopsTheAgent(t *testing.T) {
	l := live(t)
	tm := startTerm(t, l.chatEnv(t), "--agent", "fake", "slow")
	tm.expect("fake> Working")
	tm.send("\x03")
	tm.expect("Stopping the agent (Ctrl-C again to quit)")
	tm.expect("(stopped)")
	tm.expect("you> ")
	tm.send("/quit\r")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("/quit exited %d, want 0", code)
	}
}

func TestChat_TerminalGivesWayToAnAnswerFromElsewhere(t *testing.T) {
	l := live(t)
	tm := startTerm(t, l.chatEnv(t), "--agent", "fake", "one question")
	tm.expect("Your name")
	tm.expect("> ")
	qs := l.questions(t, tm.text())
	if len(qs) != 1 {
		t.Fatalf("questions = %+v, want one", qs)
	}
	// The person answers in the browser (the same API and ledger) while the terminal asks.
	if code := l.api(t, http.MethodPost, fmt.Sprintf("/questions/%d/answer", qs[0].ID), map[string]any{"values": map[string]any{"name": "Ann"}}, nil); code != 200 {
		t.Fatalf("answer from elsewhere: %d", code)
	}
	tm.expect(fmt.Sprintf("(question %d was answered elsewhere by ann", qs[0].ID))
	tm.expect("Thanks, all noted.")
	tm.expect("you> ")
	tm.send("\x04")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}

// chatRun runs parley chat to its end with stdin (not a terminal) and returns its output
// and exit code.
func chatRun(t *testing.T, l *liveServer, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := mainCommand(append([]string{"chat"}, args...)...)
	cmd.Env = append(cmd.Env, l.chatEnv(t)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(waitLong):
		cmd.Process.Kill()
		<-done
		t.Fatalf("parley chat did not end; it wrote:\n%s", out.String())
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func TestChat_PipedInputAnswersLineByLine(t *testing.T) {
	l := live(t)
	out, code := chatRun(t, l, "Chicago\n0\n20\n2\n", "--agent", "fake", "two questions")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	for _, want := range []string{"you> two questions", "Where and for how many?", "City: Chicago", "Guests: 0",
		"Guests: Must be between 1 and 500.", "Guests: 20", "Which venue?", "Your choice: 2", "Thanks, all noted."} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "> \n") || strings.Contains(out, "Ctrl-D") {
		t.Errorf("prompts were drawn for input that is not a terminal:\n%s", out)
	}
	qs := l.questions(t, out)
	if len(qs) != 2 || qs[1].Resolution == nil || qs[1].Resolution.Values["choice"] != "Park" ||
		qs[0].Resolution == nil || qs[0].Resolution.Values["guests"] != json.Number("20") {
		t.Fatalf("questions = %+v", qs)
	}
}

func TestChat_PipedInputEndsWithADecline(t *testing.T) {
	l := live(t)
	out, code := chatRun(t, l, "", "--agent", "fake", "one question")
	if code != 0 || !strings.Contains(out, "(declined)") || !strings.Contains(out, "Thanks, all noted.") {
		t.Fatalf("exit %d, want 0 after declining:\n%s", code, out)
	}
	if qs := l.questions(t, out); len(qs) != 1 || qs[0].State != "declined" {
		t.Fatalf("questions = %+v, want one declined", qs)
	}
}

func TestChat_PipedInputEndDeclinesOnlyWhatIsPending(t *testing.T) {
	l := live(t)
	// Declined, the first question is followed by a second: that one is left pending.
	out, code := chatRun(t, l, "", "--agent", "fake", "two questions")
	if code != chat.ExitNoScript || strings.Count(out, "(declined)") != 1 || !strings.Contains(out, "came after the input ended") {
		t.Fatalf("exit %d, want %d after one decline:\n%s", code, chat.ExitNoScript, out)
	}
	if qs := l.questions(t, out); len(qs) != 2 || qs[0].State != "declined" || qs[1].State != "pending" {
		t.Fatalf("questions = %+v, want the first declined, the second pending", qs)
	}
}

func TestChat_PipedInputReportsAMessageNotSent(t *testing.T) {
	l := live(t)
	var created api.ConversationCreated
	if status := l.api(t, http.MethodPost, "/conversations", api.NewConversation{Agent: "fake", Text: "hello"}, &created); status != http.StatusCreated {
		t.Fatalf("start a conversation: %d", status)
	}
	id := strconv.FormatInt(created.Conversation.ID, 10)
	tail := func(s string) string { return s[max(0, len(s)-2000):] }
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"AnEmptyArgument", "", []string{"--conversation", id, ""}, "not sent: "},
		{"APipedLineTooLong", strings.Repeat("x", domain.MaxMessageBytes+1) + "\n", []string{"--conversation", id}, "not sent: The message is too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := chatRun(t, l, tc.stdin, tc.args...)
			if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, "not sent: 1 message") {
				t.Fatalf("exit %d, want 1 with %q and a summary; the output ends:\n%s", code, tc.want, tail(out))
			}
		})
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestChat_AnswersFileRunsTheConversationToItsEnd(t *testing.T) {
	l := live(t)
	answers := writeFile(t, "answers.yaml", `
message: two questions
answers:
  - {city: Chicago, guests: 20}
  - choice: other
    other: The Art Institute
`)
	out, code := chatRun(t, l, "", "--agent", "fake", "--answers", answers)
	if code != 0 || !strings.Contains(out, "Thanks, all noted.") {
		t.Fatalf("exit %d, want 0 at the end of the run:\n%s", code, out)
	}
	qs := l.questions(t, out)
	if len(qs) != 2 || qs[0].Resolution == nil || qs[1].Resolution == nil {
		t.Fatalf("questions = %+v, want two answered", qs)
	}
	if got, want := qs[0].Resolution.Values, map[string]any{"city": "Chicago", "guests": json.Number("20")}; !reflect.DeepEqual(got, want) {
		t.Errorf("first answer = %v, want %v", got, want)
	}
	if got, want := qs[1].Resolution.Values, map[string]any{"choice": "other", "other": "The Art Institute"}; !reflect.DeepEqual(got, want) {
		t.Errorf("second answer = %v, want %v", got, want)
	}
}

// A CI job runs the built-in event planner end to end from a file of answers, as the
// API page shows (docs/api.md).
func TestChat_AnswersFileRunsTheEventPlanner(t *testing.T) {
	l := live(t)
	answers := writeFile(t, "offsite.yaml", `
message: Plan a team offsite for 30 people in Seattle
answers:
  - choice: south-lake-union-hall
  - budget: 2500
  - decision: approve
  - dietary: [vegetarian, gluten-free]
    notes: One guest is coeliac.
  - {date: `+time.Now().AddDate(0, 0, 21).Format(time.DateOnly)+`, time: evening}
`)
	out, code := chatRun(t, l, "", "--agent", "event-planner", "--answers", answers)
	if code != 0 || !strings.Contains(out, "Your event plan") {
		t.Fatalf("exit %d, want 0 with the plan:\n%s", code, out)
	}
	qs := l.questions(t, out)
	if len(qs) != 5 {
		t.Fatalf("%d questions, want 5", len(qs))
	}
	for _, q := range qs {
		if q.Resolution == nil || q.Resolution.Outcome != string(domain.Answered) || q.Resolution.Via != "token laptop" {
			t.Errorf("question %d = %+v, want answered with the token", q.ID, q.Resolution)
		}
	}
}

func TestChat_AnswersFileExitCodes(t *testing.T) {
	l := live(t)
	t.Run("a question without an answer leaves it pending, exit 3", func(t *testing.T) {
		answers := writeFile(t, "answers.json", `{"message": "two questions", "answers": [{"city": "Chicago", "guests": 20}]}`)
		out, code := chatRun(t, l, "", "--agent", "fake", "--answers", answers)
		if code != chat.ExitNoScript || !strings.Contains(out, "Which venue?") || !strings.Contains(out, "no scripted answer for question 2") {
			t.Fatalf("exit %d, want %d naming question 2:\n%s", code, chat.ExitNoScript, out)
		}
		if qs := l.questions(t, out); len(qs) != 2 || qs[1].State != "pending" {
			t.Fatalf("questions = %+v, want the second pending", qs)
		}
		// The same conversation goes on from where it stands, its question still pending.
		id := regexp.MustCompile(`Conversation (\d+)`).FindStringSubmatch(out)[1]
		rest := writeFile(t, "rest.yaml", "answers:\n  - {choice: Museum}\n")
		out, code = chatRun(t, l, "", "--conversation", id, "--answers", rest)
		if code != 0 || !strings.Contains(out, "you> two questions") || !strings.Contains(out, "Which venue?") || !strings.Contains(out, "Thanks, all noted.") {
			t.Fatalf("going on: exit %d, want 0 with the conversation so far and its end:\n%s", code, out)
		}
	})
	t.Run("a refused answer, exit 4", func(t *testing.T) {
		answers := writeFile(t, "answers.yml", "answers:\n  - {city: Chicago, guests: 600}\n")
		out, code := chatRun(t, l, "", "--agent", "fake", "--answers", answers, "two questions")
		if code != chat.ExitRejected || !strings.Contains(out, "Guests: Must be between 1 and 500.") {
			t.Fatalf("exit %d, want %d with the server's message:\n%s", code, chat.ExitRejected, out)
		}
	})
	t.Run("answers left over, exit 6", func(t *testing.T) {
		answers := writeFile(t, "answers.yaml", "message: one question\nanswers:\n  - {name: Ann}\n  - {name: Bob}\n")
		out, code := chatRun(t, l, "", "--agent", "fake", "--answers", answers)
		if code != chat.ExitLeftOver || !strings.Contains(out, "1 scripted answers unused") {
			t.Fatalf("exit %d, want %d:\n%s", code, chat.ExitLeftOver, out)
		}
	})
	t.Run("a failed run, exit 5", func(t *testing.T) {
		answers := writeFile(t, "answers.yaml", "message: fail\n")
		out, code := chatRun(t, l, "", "--agent", "fake", "--answers", answers)
		if code != chat.ExitRunFailed || !strings.Contains(out, "The run failed: ") || !strings.Contains(out, "the model is overloaded") {
			t.Fatalf("exit %d, want %d with the error:\n%s", code, chat.ExitRunFailed, out)
		}
	})
	t.Run("a decline", func(t *testing.T) {
		answers := writeFile(t, "answers", "message: one question\nanswers:\n  - decline: not today\n")
		out, code := chatRun(t, l, "", "--agent", "fake", "--answers", answers)
		if code != 0 {
			t.Fatalf("exit %d, want 0:\n%s", code, out)
		}
		if qs := l.questions(t, out); len(qs) != 1 || qs[0].Resolution == nil || qs[0].Resolution.Reason != "not today" {
			t.Fatalf("questions = %+v, want one declined with the reason", qs)
		}
	})
}

// reply is the fake model's answer to "markdown".
const reply = "**Event:** Offsite in *Chicago*.\n\n| Item | Cost |\n| --- | --- |\n| Venue | $1,200 |\n| Food | $800 |\n\n" +
	"- one\n- two\n\n```go\nfunc main() {}\n\n// still code\n```\n\nThat is **all**."

func TestChat_TerminalRendersMarkdown(t *testing.T) {
	l := live(t)
	tm := startTerm(t, append(l.chatEnv(t), "TERM=xterm-256color", "NO_COLOR="), "--agent", "fake", "markdown")
	tm.expect("you> ")
	shown := ansi.Strip(chattest.Screen(strings.ReplaceAll(tm.text(), "\r\n", "\n")))
	for _, raw := range []string{"**", "| --- |", "```"} {
		if strings.Contains(shown, raw) {
			t.Errorf("the terminal shows %q:\n%s", raw, shown)
		}
	}
	for _, want := range []string{"fake> Event: Offsite in Chicago.", "Venue", "$1,200", "• two", "That is all."} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, shown)
		}
	}
	tm.send("/quit\r")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("/quit exited %d, want 0", code)
	}
}

func TestChat_PipedOutputKeepsMarkdownAsItCame(t *testing.T) {
	l := live(t)
	out, code := chatRun(t, l, "", "--agent", "fake", "markdown")
	if code != 0 || !strings.Contains(out, "fake> "+reply+"\n") || strings.Contains(out, "\x1b") {
		t.Fatalf("exit %d, want 0 with the reply as it came and no escape sequences:\n%q", code, out)
	}
}

func TestChat_TerminalRegeneratesAndEdits(t *testing.T) {
	l := live(t)
	tm := startTerm(t, l.chatEnv(t), "--agent", "fake", "echo hello")
	tm.expect("You said: echo hello (answer ")
	tm.expect("you> ")
	tm.send("/regenerate\r")
	tm.expect("— version 2 of 2 —")
	tm.expect("You said: echo hello (answer ")
	tm.expect("you> ")
	tm.send("/edit\r")
	tm.expect("#1  echo hello")
	tm.expect("you> ")
	tm.send("/edit echo again\r")
	tm.expect("— version 3 of 3 —")
	tm.expect("you> echo again")
	tm.expect("You said: echo again (answer ")
	tm.expect("you> ")
	tm.send("/quit\r")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("/quit exited %d, want 0", code)
	}
	if n := strings.Count(chattest.Screen(tm.text()), "You said:"); n != 3 {
		t.Errorf("%d answers shown, want 3 (one per version):\n%s", n, tm.text())
	}

	id := regexp.MustCompile(`Conversation (\d+)`).FindStringSubmatch(tm.text())[1]
	var vs api.Versions
	l.api(t, http.MethodGet, "/conversations/"+id+"/versions", nil, &vs)
	if len(vs.Versions) != 3 || vs.Current != 2 || vs.Versions[1].Reason != "regenerate" || vs.Versions[2].Reason != "edit" || vs.Versions[2].By != "ann" {
		t.Errorf("versions %+v, want 3: the first, regenerated, edited by ann (shown)", vs)
	}
}

func TestChat_PipedRegenerateAndEdit(t *testing.T) {
	l := live(t)
	out, code := chatRun(t, l, "/regenerate\n/edit echo bye\n", "--agent", "fake", "echo hi")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	answers := regexp.MustCompile(`fake> You said: (echo \w+) \(answer \d+\)`).FindAllStringSubmatch(out, -1)
	if len(answers) != 3 || answers[0][1] != "echo hi" || answers[1][1] != "echo hi" || answers[0][0] == answers[1][0] || answers[2][1] != "echo bye" {
		t.Fatalf("answers %q, want two to echo hi, then one to echo bye:\n%s", answers, out)
	}
	for _, want := range []string{"you> echo hi\n", "— version 2 of 2 —\n", "— version 3 of 3 —\nyou> echo bye\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

func TestChat_TerminalSaysAMessageIsQueued(t *testing.T) {
	l := live(t)
	tm := startTerm(t, l.chatEnv(t), "--agent", "fake", "slow")
	tm.expect("Working")
	id := regexp.MustCompile(`Conversation (\d+)`).FindStringSubmatch(tm.text())[1]
	var sent api.MessageSent
	if status := l.api(t, http.MethodPost, "/conversations/"+id+"/messages", api.NewMessage{Text: "and a cake"}, &sent); status != http.StatusAccepted || sent.Queued == nil {
		t.Fatalf("send while the agent works: %d %+v, want 202 and queued", status, sent)
	}
	tm.expect("(queued: will be sent when the agent finishes)")
	tm.send("\x03")
	tm.expect("(stopped)")
	tm.expect("you> ")
	tm.send("/quit\r")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("/quit exited %d, want 0", code)
	}
}
