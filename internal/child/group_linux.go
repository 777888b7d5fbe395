package child

import "syscall"

// parentDeathSignal has the kernel send SIGTERM to the server when Parley dies. (Linux sends
// it when the thread that started the server ends; Go's threads end only with a goroutine
// that locked one, which Parley does not do.)
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }

// parentDeathKnown: a child can learn that its parent died (see Guarded).
const parentDeathKnown = true
