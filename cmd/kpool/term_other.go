//go:build !unix

package main

import "os"

// termWidth is the width of the terminal f is, 0 when unknown.
func termWidth(*os.File) int { return 0 }
