package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The wrk outputs are wrk 4.1.0's, trimmed to what matters.
const wrkClean = `Running 10s test @ http://127.0.0.1:39401/api/v1/nodepools/01a2
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.42ms    1.20ms  30.00ms   90.00%
    Req/Sec     3.85k   200.00     4.20k    70.00%
  Latency Distribution
     50%    1.93ms
     75%    2.50ms
     90%    3.20ms
     99%    9.68ms
  76817 requests in 10.01s, 100.00MB read
Requests/sec:   7674.41
Transfer/sec:     10.00MB
`

const wrkErrors = `Running 10s test @ http://127.0.0.1:39401
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     7.77s     2.10s    9.92s    80.00%
    Req/Sec     1.00      2.00     9.00     90.00%
  Latency Distribution
     50%    8.40s
     75%    9.10s
     90%    9.50s
     99%    9.92s
  26 requests in 10.06s, 1.60MB read
  Socket errors: connect 0, read 1, write 0, timeout 4
  Non-2xx or 3xx responses: 12
Requests/sec:      2.58
Transfer/sec:    162.00KB
`

const wrkMicro = `  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   174.44us  100.19us   3.83ms   93.71%
  Latency Distribution
     50%  157.00us
     99%    1.20m
  45405 requests in 2.10s, 5.58MB read
Requests/sec:  21620.38
`

func TestParseWrk(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want wrkResult
		err  bool
	}{
		{"clean", wrkClean, wrkResult{rps: 7674.41, avgMs: 2.42, p50Ms: 1.93, p99Ms: 9.68, requests: 76817}, false},
		{"errors", wrkErrors, wrkResult{rps: 2.58, avgMs: 7770, p50Ms: 8400, p99Ms: 9920, requests: 26, non2xx: 12,
			socketErrors: 5, socketDetail: "connect 0, read 1, write 0, timeout 4"}, false},
		{"micro and minutes", wrkMicro, wrkResult{rps: 21620.38, avgMs: 0.17444, p50Ms: 0.157, p99Ms: 72000, requests: 45405}, false},
		{"no latency", "  0 requests in 2.00s, 0.00B read\nRequests/sec:      0.00\n", wrkResult{}, false},
		{"not wrk", "unable to connect to 127.0.0.1:1 Connection refused\n", wrkResult{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWrk(tc.out)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !approx(got.rps, tc.want.rps) || !approx(got.avgMs, tc.want.avgMs) || !approx(got.p50Ms, tc.want.p50Ms) ||
				!approx(got.p99Ms, tc.want.p99Ms) || got.requests != tc.want.requests || got.non2xx != tc.want.non2xx ||
				got.socketErrors != tc.want.socketErrors || got.socketDetail != tc.want.socketDetail {
				t.Errorf("parseWrk = %+v\nwant       %+v", got, tc.want)
			}
		})
	}
}

func approx(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestWrkMillis(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"497.00us", 0.497, false},
		{"2.42ms", 2.42, false},
		{"1.05s", 1050, false},
		{"1.20m", 72000, false},
		{"2.00h", 7200000, false},
		{"12", 0, true},
		{"fast", 0, true},
	} {
		got, err := wrkMillis(tc.in)
		if (err != nil) != tc.err || !approx(got, tc.want) {
			t.Errorf("wrkMillis(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParsePgbench(t *testing.T) {
	const pg15 = `pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: pgbench_insert.sql
scaling factor: 1
query mode: prepared
number of clients: 16
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 116290
number of failed transactions: 0 (0.000%)
latency average = 1.376 ms
initial connection time = 12.345 ms
tps = 11628.960439 (without initial connection time)
`
	for _, tc := range []struct {
		name     string
		out      string
		tps, avg float64
		err      bool
	}{
		{"pg15", pg15, 11628.960439, 1.376, false},
		{"no average", "tps = 10.5 (without initial connection time)\n", 10.5, 0, false},
		{"failed", "pgbench: error: connection to server failed\n", 0, 0, true},
	} {
		tps, avg, err := parsePgbench(tc.out)
		if (err != nil) != tc.err || !approx(tps, tc.tps) || !approx(avg, tc.avg) {
			t.Errorf("%s: parsePgbench = %v, %v, %v; want %v, %v, error %v", tc.name, tps, avg, err, tc.tps, tc.avg, tc.err)
		}
	}
}

func TestReadPgbenchLogs(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "x.log.1")
	b := filepath.Join(dir, "x.log.1.1")
	os.WriteFile(a, []byte("0 1 1500 0 1700000000 1\n0 2 2500 0 1700000000 2\n"), 0o644)
	os.WriteFile(b, []byte("1 1 failed 0 1700000000 3\n1 2 500 0 1700000000 4\nshort\n"), 0o644)
	lat, err := readPgbenchLogs([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 3 || !approx(percentile(lat, 0.5), 1.5) || !approx(percentile(lat, 0.99), 2.5) {
		t.Errorf("latencies %v: p50 %v p99 %v", lat, percentile(lat, 0.5), percentile(lat, 0.99))
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100..1, unsorted
	}
	for _, tc := range []struct {
		values []float64
		q      float64
		want   float64
	}{
		{nil, 0.99, 0},
		{[]float64{7}, 0.5, 7},
		{[]float64{3, 1, 2}, 0.5, 2},
		{hundred, 0.99, 99},
		{hundred, 0.50, 50},
		{hundred, 1, 100},
	} {
		if got := percentile(tc.values, tc.q); !approx(got, tc.want) {
			t.Errorf("percentile(%v, %v) = %v, want %v", len(tc.values), tc.q, got, tc.want)
		}
	}
}

func TestDeepPosition(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, fixed   int
		frac       float64
		step, want int
	}{
		{"list 10k", 10000, 9000, 0.9, 50, 9000},
		{"list 20k keeps 9000", 20000, 9000, 0.9, 50, 9000},
		{"list 600", 600, 9000, 0.9, 50, 500},
		{"list 120", 120, 9000, 0.9, 50, 100},
		{"list 60 still one page deep", 60, 9000, 0.9, 50, 50},
		{"list 50 has no second page", 50, 9000, 0.9, 50, 0},
		{"1M near", 1000000, 9000, 0.009, 1, 9000},
		{"1M far", 1000000, 990000, 0.99, 1, 990000},
		{"2000 near", 2000, 9000, 0.009, 1, 18},
		{"2000 far", 2000, 990000, 0.99, 1, 1980},
		{"50 near", 50, 9000, 0.009, 1, 1},
		{"1 has nothing after", 1, 9000, 0.009, 1, 0},
	} {
		if got := deepPosition(tc.n, tc.fixed, tc.frac, tc.step); got != tc.want {
			t.Errorf("%s: deepPosition(%d, %d, %v, %d) = %d, want %d", tc.name, tc.n, tc.fixed, tc.frac, tc.step, got, tc.want)
		}
	}
}

func TestResultsTable(t *testing.T) {
	ceilings := []ceiling{{statement: "select", clients: 16, tps: 20000}, {statement: "insert", clients: 16, tps: 10000}}
	results := []result{
		{workload: "get", label: "a. GET /nodepools/{id}", ceiling: "select", store: "postgres", conns: 16,
			wrk: wrkResult{rps: 7674.41, p50Ms: 1.93, p99Ms: 9.68}},
		{workload: "create", label: "b1. POST", ceiling: "insert", store: "sqlite", conns: 16,
			wrk:   wrkResult{rps: 3.17, p50Ms: 4390, p99Ms: 4460, non2xx: 12, socketErrors: 4, socketDetail: "connect 0, read 0, write 0, timeout 4"},
			notes: "pools 0→850"},
		{workload: "put", label: "c. PUT", ceiling: "insert", store: "postgres", conns: 64, wrk: wrkResult{rps: 500}},
	}
	got := resultsTable(results, ceilings)
	for _, want := range []string{
		"| workload | conns | store | req/s | p50 | p99 | errors | % of ceiling | notes |",
		"| a. GET /nodepools/{id} | 16 | postgres | 7,674 | 1.93 ms | 9.68 ms | 0 | 38.4% of select |  |",
		"| b1. POST | 16 | sqlite | 3.17 | 4,390 ms | 4,460 ms | **!! 12 non-2xx; socket connect 0, read 0, write 0, timeout 4** | 0.03% of insert | pools 0→850 |",
		"| c. PUT | 64 | postgres | 500 | — | — | 0 | — |  |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("table lacks the line\n%s\nin\n%s", want, got)
		}
	}
	if bad := flagged(results); len(bad) != 1 || bad[0] != "b1. POST c16 sqlite" {
		t.Errorf("flagged = %q", bad)
	}
}

func TestRatiosTable(t *testing.T) {
	results := []result{
		{workload: "create", store: "postgres", conns: 16, wrk: wrkResult{rps: 100}},
		{workload: "create-big", store: "postgres", conns: 16, wrk: wrkResult{rps: 50}},
		{workload: "create", store: "sqlite", conns: 16, wrk: wrkResult{rps: 100}},
		{workload: "create-big", store: "sqlite", conns: 16, wrk: wrkResult{rps: 90}},
		{workload: "1m-first", store: "postgres", conns: 16, wrk: wrkResult{rps: 18}},
	}
	cfg := config{big: 100000, list: 10000, million: 1000000}
	got := ratiosTable(ratiosFor(cfg), results, []int{16, 64})
	for _, want := range []string{
		"| b2 ÷ b1: create into 100,000+ pools ÷ into an empty cluster | 16 | postgres | 0.50 **!! below 0.83** |",
		"| b2 ÷ b1: create into 100,000+ pools ÷ into an empty cluster | 16 | sqlite | 0.90 ok |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ratios lack\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "e1 ÷ d1") {
		t.Errorf("a ratio without its denominator was printed:\n%s", got)
	}
	if ratiosTable(ratiosFor(cfg), nil, []int{16}) != "" {
		t.Error("no results should give no table")
	}
}

func TestCountNote(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    result
		want string
	}{
		{"create", result{before: 200, after: 1050}, "pools 200→1050"},
		{"put", result{wrk: wrkResult{requests: 5000, non2xx: 10}, before: 1, after: 4987}, "2xx 4990, generation +4986, lost **!! 4**"},
		{"put", result{wrk: wrkResult{requests: 5000}, before: 1, after: 5004}, "2xx 5000, generation +5003, lost 0"},
	} {
		if got := countNote(tc.name, tc.r); got != tc.want {
			t.Errorf("countNote(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{formatRate(28071.2), "28,071"},
		{formatRate(1234567), "1,234,567"},
		{formatRate(85.31), "85.3"},
		{formatRate(3.17), "3.17"},
		{formatMs(0), "—"},
		{formatMs(0.54), "0.54 ms"},
		{formatMs(22.04), "22.0 ms"},
		{formatMs(7050), "7,050 ms"},
		{thousands(999), "999"},
		{thousands(1000), "1,000"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-big", "200", "-list", "600", "-million", "2000", "-duration", "2s", "-conns", "4", "-skip", "pgbench,1m-offset"})
	if err != nil {
		t.Fatal(err)
	}
	if c.big != 200 || c.list != 600 || c.million != 2000 || len(c.conns) != 1 || c.conns[0] != 4 ||
		!c.skip["pgbench"] || !c.skip["1m-offset"] || len(c.stores) != 2 || !c.profile {
		t.Errorf("parseFlags = %+v", c)
	}
	for _, bad := range [][]string{
		{"-conns", "16,x"},
		{"-conns", "0"},
		{"-conns", "16,16"},
		{"-stores", "sqlite,sqlite"},
		{"-stores", "mysql"},
		{"-skip", "everything"},
		{"-duration", "100ms"},
		{"extra"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", true},
		{"postgres://postgres@localhost/test", true},
		{"postgres://postgres@[::1]:5432/test", true},
		{"postgres://postgres@db.example.com:5432/test", false},
		{"postgres://postgres@10.0.0.5/test", false},
		{"postgres://root@/test?host=/var/run/postgresql&port=5432", true},
		{"postgres://root@/test?host=db.example.com", false},
	} {
		if err := checkLoopback(tc.url); (err == nil) != tc.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

func TestCeilingsTable(t *testing.T) {
	got := ceilingsTable([]ceiling{
		{statement: "insert", clients: 16, tps: 11628.96, avgMs: 1.376, p50Ms: 1.2, p99Ms: 3.06, idle: 97},
		{statement: "select", clients: 64, tps: 22323.3, avgMs: 2.867, p50Ms: 2.5, p99Ms: 11.13, idle: 8},
	}, 10*time.Second)
	for _, want := range []string{
		"-T10,",
		"| INSERT one nodepool-shaped row | 16 | 11,629 | 1.38 ms | 1.20 ms | 3.06 ms | 97% |\n",
		"| SELECT by primary key (100,000 rows) | 64 | 22,323 | 2.87 ms | 2.50 ms | 11.1 ms | **!! 8% (busy machine)** |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ceilings table lacks %q in\n%s", want, got)
		}
	}
}

// TestMergeLegs checks that two legs merge into one run: rates and
// percentiles averaged, counts added, and what was counted carried across a
// gap in which another run changed the same object.
func TestMergeLegs(t *testing.T) {
	a := result{workload: "put", wrk: wrkResult{rps: 100, p99Ms: 10, avgMs: 2, requests: 1000}, idle: 90, before: 5, after: 1005, counted: true}
	b := result{workload: "put", wrk: wrkResult{rps: 300, p99Ms: 20, avgMs: 4, requests: 3000, non2xx: 1}, idle: 80, before: 9000, after: 11999, counted: true}
	m := merge(a, b)
	if m.wrk.rps != 200 || m.wrk.p99Ms != 15 || m.wrk.avgMs != 3.5 || m.wrk.requests != 4000 || m.wrk.non2xx != 1 || m.idle != 80 {
		t.Fatalf("merged %+v", m)
	}
	if m.before != 5 || m.after != 4004 || lostUpdates(m) != 0 {
		t.Fatalf("counted %d→%d, lost %d; want 5→4004, 0", m.before, m.after, lostUpdates(m))
	}
}
