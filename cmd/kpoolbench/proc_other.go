//go:build !linux

package main

import "syscall"

// childAttr is nil off Linux, which has no parent-death signal; the
// deferred cleanup and signal handling still stop the servers.
func childAttr(keep bool) *syscall.SysProcAttr { return nil }
