package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serveCommand is `parley serve` on a free port, in a child process.
func serveCommand(args ...string) *exec.Cmd {
	return mainCommand(append([]string{"serve", "--addr", "127.0.0.1:0", "--builtin-pace", "0s"}, args...)...)
}

// startServe starts cmd and waits for its listening line, returning the address it serves;
// logs gets what it writes on stderr. A server that exits first is an error with its logs.
func startServe(cmd *exec.Cmd, logs *syncBuffer) (string, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	found, ended := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(ended)
		re := regexp.MustCompile(`listening on (http://[^\s"]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(logs, sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case url := <-found:
		return url, nil
	case <-ended:
		err := cmd.Wait()
		return "", fmt.Errorf("parley serve exited (%v) before listening:\n%s", err, logs.String())
	case <-time.After(waitLong):
		cmd.Process.Kill()
		return "", fmt.Errorf("no listening line within %s:\n%s", waitLong, logs.String())
	}
}

func TestServe_OneProcessPerDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	first := serveCommand("--db", db)
	var logs syncBuffer
	if _, err := startServe(first, &logs); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait() }()

	// A second server is refused, and names the one that has the database.
	second := serveCommand("--db", db)
	var secondLogs syncBuffer
	if _, err := startServe(second, &secondLogs); err == nil {
		second.Process.Kill()
		second.Wait()
		t.Fatalf("a second parley serve on the database started:\n%s", secondLogs.String())
	}
	want := fmt.Sprintf("parley: database %s is in use by parley serve, pid %d on ", db, first.Process.Pid)
	if !strings.Contains(secondLogs.String(), want) {
		t.Errorf("the second server said:\n%s\nwant %q", secondLogs.String(), want)
	}

	// The operator's commands work beside the server.
	if out, err := runMain(nil, "", "user", "add", "ann", "--db", db); err != nil || !strings.Contains(out, "made ann") {
		t.Errorf("parley user add beside the server = %q, %v", out, err)
	}

	// kill -9 leaves no lock behind: the next server starts.
	first.Process.Kill()
	first.Wait()
	next := serveCommand("--db", db)
	var nextLogs syncBuffer
	if _, err := startServe(next, &nextLogs); err != nil {
		t.Fatalf("after kill -9 of the first server: %v", err)
	}
	next.Process.Signal(syscall.SIGTERM)
	if err := next.Wait(); err != nil {
		t.Errorf("the next server ended with %v:\n%s", err, nextLogs.String())
	}
}

// asAnotherUser prepares cmd to run as a user who is refused what a file's permissions
// refuse: when the tests run as root (who may write any file), as nobody, from a copy of the
// test binary that nobody may run. It returns the uid who runs cmd.
func asAnotherUser(t *testing.T, cmd *exec.Cmd, dir string) int {
	t.Helper()
	if os.Geteuid() != 0 {
		return os.Geteuid()
	}
	const nobody = 65534
	bin := filepath.Join(dir, "parley.test")
	if _, err := os.Stat(bin); err != nil {
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Path, cmd.Args[0] = bin, bin
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return nobody
}

func TestServe_RefusesAReadOnlyDatabase(t *testing.T) {
	// A directory everyone may enter (t.TempDir is its owner's alone).
	base, err := os.MkdirTemp("", "parley-read-only")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// readOnly makes the database at path, in dir, read-only for uid; it returns the file
		// named in the message.
		readOnly func(t *testing.T, dir, path string, uid int) string
	}{
		{"the file", func(t *testing.T, dir, path string, uid int) string {
			must(t, os.Chown(dir, uid, -1))
			must(t, os.Chmod(path, 0o444))
			return path
		}},
		{"its directory", func(t *testing.T, dir, path string, uid int) string {
			must(t, os.Chmod(path, 0o666))
			must(t, os.Chmod(dir, 0o555))
			return dir
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(base, fmt.Sprint(i))
			must(t, os.Mkdir(dir, 0o755))
			db := filepath.Join(dir, "p.db")
			if _, err := runMain(nil, "", "user", "add", "ann", "--db", db); err != nil {
				t.Fatal(err)
			}
			cmd := serveCommand("--db", db)
			named := tt.readOnly(t, dir, db, asAnotherUser(t, cmd, base))
			var logs syncBuffer
			if _, err := startServe(cmd, &logs); err == nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("parley serve started on a read-only database:\n%s", logs.String())
			}
			want := fmt.Sprintf("parley: database %s is read-only: cannot write %s (permission denied)", db, named)
			if !strings.Contains(logs.String(), want) {
				t.Errorf("parley serve said:\n%s\nwant %q", logs.String(), want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
