//go:build !unix

package main

import "os"

// termWidth is the width of the terminal f is, 0 when unknown.
func termWidth(*os.File) int { return 0 }

// isTTY reports whether f is a character device, such as a terminal.
func isTTY(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
