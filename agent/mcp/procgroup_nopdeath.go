//go:build unix && !linux

package mcp

import "syscall"

// parentDeathSignal does nothing where the kernel cannot signal a child when its parent dies.
func parentDeathSignal(*syscall.SysProcAttr) {}
