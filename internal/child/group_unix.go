//go:build unix

package child

import (
	"os/exec"
	"syscall"
)

// OwnGroup starts a child in a process group of its own; where the system can, the
// child is also told (SIGTERM) when Parley dies without stopping it (kill -9, out of
// memory), so that it does not outlive Parley.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd.SysProcAttr)
}

// KillGroup kills what is left of a child's process group, once the child is stopped.
func KillGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// TermGroup asks a child's whole process group to stop (SIGTERM).
func TermGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}
