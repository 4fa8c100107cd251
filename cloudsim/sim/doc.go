// Package sim is the engine below kpool's cloud emulators. An emulator is
// a Handler that speaks one cloud's wire protocol (its routes, error
// bodies, long-running-operation encoding and rules); the Engine around it
// does what every emulator needs:
//
//   - time: a Clock (RealClock, or a ManualClock that tests drive) read once
//     per request, so that a test never sleeps;
//   - latency: every answer held for Options.Latency on the clock;
//   - rate limits: a token bucket; Request.Throttle says when to answer 429
//     and what Retry-After to send;
//   - faults, deterministic from a seed: Request.Fault picks a 500, a 503, a
//     dropped connection (Drop), or an operation that will end Failed;
//   - long-running operations: Request.Start makes one that ends after
//     OperationTime plus NodeTime per node and moves its nodes one at a
//     time; Done runs when it ends;
//   - a call log (Calls) of every request, its status and its fault;
//   - TLS with a certificate authority made at start (CA, TLSServer).
//
// The engine serialises requests: Handler runs under its lock, as do the
// functions passed to Do, so an emulator's state needs no lock of its own.
package sim
