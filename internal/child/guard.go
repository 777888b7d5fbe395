//go:build unix

package child

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// guardEnv marks a process started as a guard (see Guarded).
const guardEnv = "PARLEY_CHILD_GUARD"

// guardGrace is how long a guard lets its group end after SIGTERM before it kills it.
const guardGrace = 2 * time.Second

// A guard is a copy of Parley's own program that runs a child for it: the child and all
// it starts stay in the guard's process group, and when Parley dies without stopping them
// (kill -9) the kernel tells the guard, which ends the whole group. The kernel itself
// would tell the child only, and leave what the child started.
func init() {
	if os.Getenv(guardEnv) == "1" {
		os.Exit(guard(os.Args[1:]))
	}
}

// Guard makes cmd run under a guard, where the system lets a child learn that its parent
// died (Linux): Parley's own program, started in cmd's place with cmd's environment, which
// runs cmd's program. Call it once cmd is set up, before OwnGroup and Start.
func Guard(cmd *exec.Cmd) {
	self, err := os.Executable()
	if err != nil || !parentDeathKnown || cmd.Path == "" || cmd.Err != nil {
		return
	}
	if st, err := os.Stat(cmd.Path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return // Start says why, as for any command
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, guardEnv+"=1")
	cmd.Args = append([]string{self, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
}

// guard runs argv in its own process group (the guard's), and returns its exit code. A
// SIGTERM (Parley's stop, or its death) is passed to the whole group; what has not ended
// guardGrace later is killed.
func guard(argv []string) int {
	if len(argv) == 0 {
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, guardEnv+"=") })
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("parley: " + err.Error() + "\n")
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The guard leads its group when Parley started it so (OwnGroup); otherwise it guards
	// the child alone.
	group := syscall.Getpgrp() == os.Getpid()
	var err error
	select {
	case err = <-done:
	case <-sigs:
		// Parley stops, or died: the group ends, the guard last, with the rest.
		if group {
			_ = syscall.Kill(-os.Getpid(), syscall.SIGTERM)
		} else {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		select {
		case <-done:
		case <-time.After(guardGrace):
		}
		if group {
			_ = syscall.Kill(-os.Getpid(), syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		return 143
	}
	// The child ended: what it left in the group is told to end too (Parley kills what
	// is left once the guard is gone).
	if group {
		_ = syscall.Kill(-os.Getpid(), syscall.SIGTERM)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Ended by a signal: the guard ends by the same, for Parley to read.
			signal.Reset(ws.Signal())
			_ = syscall.Kill(os.Getpid(), ws.Signal())
			time.Sleep(time.Second)
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}
