//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts a local server in a process group of its own; where the system can, the
// server is also told (SIGTERM) when Parley dies without stopping it (kill -9, out of
// memory), so that it does not outlive Parley.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd.SysProcAttr)
}

// killGroup kills what is left of a local server's process group, once the server is stopped.
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
