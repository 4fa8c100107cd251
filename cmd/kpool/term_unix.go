//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// termWidth is the width of the terminal f is, 0 when unknown.
func termWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// isTTY reports whether f is a terminal: it answers the terminal's size
// request, which /dev/null (a character device too) does not.
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	return err == nil
}
