package main

import "syscall"

// childAttr makes a server child die with this process (SIGKILL on its
// parent's death), unless keep asks for it to outlive the benchmark.
func childAttr(keep bool) *syscall.SysProcAttr {
	if keep {
		return nil
	}
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
