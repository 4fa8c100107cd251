// Package cloudsim holds kpool's cloud emulators: HTTP servers that speak a
// provider's node-pool API on the wire, so that the providers' official SDKs
// (and kpool's drivers on them) can be run and tested without a cloud
// account. Only AKS exists so far (package cloudsim/aks).
//
// This package has what the emulators share: the simulated Clock
// (RealClock, ManualClock), TLSServer (cloud SDKs refuse to send bearer
// tokens over plain HTTP, so emulators are always served over TLS with a
// certificate authority made at start), and Run, behind `kpool cloudsim`.
//
// README.md in this directory documents the emulators and lists what they
// do not reproduce of the real services.
package cloudsim
