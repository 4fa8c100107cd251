// Package cloudsim runs kpool's cloud emulators: HTTP servers that speak a
// provider's node-pool API on the wire, so that the providers' official
// SDKs (and kpool's drivers on them) run without a cloud account.
//
// The emulators sit below this package and know nothing of it: the engine
// every emulator is built on is cloudsim/sim, and each cloud's wire
// protocol is its own package (cloudsim/aks). This package is the runner
// above them: Start serves the emulators it is given, each on its own TLS
// listener signed by one certificate authority, and collects their demo
// clusters; Run, behind `kpool cloudsim`, also prints how to reach them.
// It names no cloud: what exists is the caller's list (cmd/kpool has it).
//
// README.md in this directory documents the layout, the AKS emulator and
// what it does not reproduce of the real service.
package cloudsim
