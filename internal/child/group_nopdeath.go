//go:build unix && !linux

package child

import "syscall"

// parentDeathSignal does nothing where the kernel cannot signal a child when its parent dies.
func parentDeathSignal(*syscall.SysProcAttr) {}

const parentDeathKnown = false
