package main

import "runtime/debug"

// settle returns the start's garbage to the system once the server is
// ready: package initialisation, the migrations and the first reads leave
// most of a fresh heap unreachable, which an idle server would otherwise
// keep, as the collector waits for the heap to double before it runs.
func settle() { debug.FreeOSMemory() }
