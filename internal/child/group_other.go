//go:build !unix

package child

import "os/exec"

func OwnGroup(*exec.Cmd) {}

func KillGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func TermGroup(cmd *exec.Cmd) { KillGroup(cmd) }

// Guard does nothing where a child cannot learn of its parent's death.
func Guard(*exec.Cmd) {}
