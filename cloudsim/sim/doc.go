// Package sim is the engine below kpool's cloud emulators. An emulator is
// a Protocol that speaks one cloud's wire: the checks the cloud makes of
// every request (Authenticate, Check), the words of its errors (a Codec),
// its routes (a Router on http.ServeMux's patterns, or its own) and its
// rules. The Engine runs every request through the same pipeline and does
// what every emulator needs:
//
//   - the pipeline: authenticate, the rate limit, the cloud's own checks,
//     the body, an injected fault, then the route, in that order, each
//     refusal in the cloud's words (Protocol, Codec);
//   - time: a Clock (RealClock, or a ManualClock that tests drive) read once
//     per request, so that a test never sleeps;
//   - latency: every answer held for Options.Latency on the clock;
//   - rate limits: a token bucket (golang.org/x/time/rate) on the clock;
//     beyond it the Codec's 429 with Retry-After;
//   - faults, deterministic from a seed: a 500, a 503, a dropped
//     connection, or an operation that will end Failed;
//   - long-running operations: Request.Start makes one that ends after
//     OperationTime plus NodeTime per node and moves its nodes one at a
//     time; Done runs when it ends;
//   - paging with opaque tokens (Page, PageSize);
//   - a call log (Calls) of every request, its status and its fault;
//   - TLS with a certificate authority made at start (CA, TLSServer).
//
// The engine serialises requests: the protocol runs under its lock, as do
// the functions passed to Do, so an emulator's state needs no lock of its
// own.
package sim
