package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/oidc/oidctest"
	"github.com/kpool/kpool/store/testdb"
)

// logWatch is a log that tests read while it is written, and wait on.
type logWatch struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed (and replaced) at every write
}

func newLogWatch() *logWatch { return &logWatch{changed: make(chan struct{})} }

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return n, err
}

func (l *logWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor blocks until the log matches re, and returns the match; it fails
// the test if that has not happened within a minute (something is broken:
// every wait here is for an event a healthy run makes at once).
func (l *logWatch) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		m := re.FindStringSubmatch(l.buf.String())
		changed := l.changed
		l.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the log never matched %s:\n%s", re, l.String())
		}
	}
}

// wire records what the drivers send: the bearer tokens on the cloud's
// API, and the token requests the client secret goes out in.
type wire struct {
	next http.RoundTripper
	mu   sync.Mutex
	// bearers are the Authorization bearer tokens sent, tokenCalls the
	// requests to an Entra ID token endpoint, armCalls to ARM.
	bearers              map[string]bool
	tokenCalls, armCalls []string
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		w.bearers[tok] = true
	}
	call := req.Method + " " + req.URL.Path
	if strings.HasSuffix(req.URL.Path, "/oauth2/v2.0/token") {
		w.tokenCalls = append(w.tokenCalls, call)
	} else if strings.HasPrefix(req.URL.Path, "/subscriptions/") {
		w.armCalls = append(w.armCalls, call)
	}
	w.mu.Unlock()
	return w.next.RoundTrip(req)
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestNoSecretInLogs runs kpool serve in token mode with everything that
// handles a secret, drives it through the CLI and the HTTP API, and then
// greps all it wrote (the server's log, every command's stdout and stderr,
// the errors they print) for every secret it used: API tokens (user,
// admin, controller, revoked, unknown), OpenID Connect ID tokens, the
// database password, the client secrets of the credentials file and the
// access tokens the cloud (the AKS emulator's Entra ID) issued. Neither a
// whole secret nor any 12 characters of one may appear. Each step must
// also have left its line in the log, so that the test fails if logging
// stops rather than passing on an empty log. Only token create's stdout,
// the token itself (its purpose), is left out.
//
// It sets cloudTransport and the environment, so it does not run in
// parallel.
func TestNoSecretInLogs(t *testing.T) {
	polls := pollEvery(10 * time.Millisecond) // --wait's

	secrets := map[string]string{} // what it is -> the secret
	var seen strings.Builder       // everything written, but the tokens token create prints
	record := func(step, stdout, stderr string, err error) {
		var printed strings.Builder
		exitCode(err, &printed)
		fmt.Fprintf(&seen, "== %s\n%s%s%s", step, stdout, stderr, printed.String())
	}
	// cli runs a command as a user of the CLI would and records what it
	// writes; it returns stdout and the error.
	cli := func(step string, args ...string) (string, error) {
		out, errOut, err := executeOn(polls, "", args...)
		record(step, out, errOut, err)
		return out, err
	}
	mustCLI := func(step string, args ...string) string {
		t.Helper()
		out, err := cli(step, args...)
		if err != nil {
			t.Fatalf("%s: kpool %s: %v\n%s", step, strings.Join(args, " "), err, seen.String())
		}
		return out
	}

	// 1. The database password, on a closed loopback port: migrate, serve,
	// controller and token find no database and say so, masking it.
	dbPassword := "SECRETPW-" + randomHex(t, 12)
	secrets["database password"] = dbPassword
	closed := closedAddr(t)
	_, port, _ := net.SplitHostPort(closed)
	for _, url := range []string{
		"postgres://kpool:" + dbPassword + "@" + closed + "/kpool?sslmode=disable",
		"postgresql://kpool@" + closed + "/kpool?sslmode=disable&password=" + dbPassword,
		"postgres://kpool@" + closed + "/kpool?sslpassword=" + dbPassword + "&sslmode=bogus",
		"host=127.0.0.1 port=" + port + " user=kpool password=" + dbPassword,
	} {
		for _, args := range [][]string{
			{"migrate"}, {"serve", "--listen", "127.0.0.1:0"}, {"controller", "--listen", "127.0.0.1:0"}, {"token", "list"},
		} {
			step := strings.Join(args, " ") + " on a closed port"
			out, errOut, err := execute("", append(args, "--database", url)...)
			record(step, out, errOut, err)
			var printed strings.Builder
			if exitCode(err, &printed) != 1 || !strings.HasPrefix(printed.String(), "Error: ") {
				t.Fatalf("%s (%s): %v, printed %q", step, redact(url), err, printed.String())
			}
		}
	}
	if n := strings.Count(seen.String(), "Error: postgres:"); n < 12 {
		t.Fatalf("%d errors from postgres, want 12:\n%s", n, seen.String())
	}
	if !strings.Contains(seen.String(), "password=xxxxx") {
		t.Fatalf("no masked password in the errors:\n%s", seen.String())
	}
	// On a real PostgreSQL (CI), serve logs its URL at start.
	t.Run("postgres", func(t *testing.T) {
		url := testdb.PostgresSchema(t) + "&password=" + dbPassword
		log := newLogWatch()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			root := newRoot()
			root.SetOut(io.Discard)
			root.SetErr(log)
			root.SetArgs([]string{"serve", "--database", url, "--listen", "127.0.0.1:0", "--reconcile=false"})
			done <- root.ExecuteContext(ctx)
		}()
		log.waitFor(t, regexp.MustCompile(`msg="kpool serving".*database=\S*password=xxxxx`))
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&seen, "== serve on PostgreSQL\n%s", log.String())
	})

	// 2. The cloud: the AKS emulator with an Entra ID application whose
	// client secret is in a file of the operator's.
	const tenant, clientID = "00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb"
	clientSecret := "client-secret-" + randomHex(t, 16)
	staleSecret := "stale-secret-" + randomHex(t, 16)
	secrets["client secret"], secrets["stale client secret"] = clientSecret, staleSecret
	var emu *aksim.Server
	run, err := cloudsim.Start(cloudsim.Config{Listen: "127.0.0.1:0", Options: sim.Options{}, // operations end at once
		Emulators: map[string]cloudsim.Maker{"aks": func(o sim.Options) (cloudsim.Emulator, error) {
			s, err := aksim.Demo(o)
			if err == nil {
				s.AddApp(aksim.App{TenantID: tenant, ClientID: clientID, Secret: clientSecret})
				emu = s
			}
			return s, err
		}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	endpoint := run.URLs()[0]
	w := &wire{next: run.Client().Transport, bearers: map[string]bool{}}
	cloudTransport = w
	t.Cleanup(func() { cloudTransport = nil })

	dir := t.TempDir()
	for name, secret := range map[string]string{"team.secret": clientSecret, "stale.secret": staleSecret} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	credsFile := filepath.Join(dir, "credentials.yaml")
	if err := os.WriteFile(credsFile, fmt.Appendf(nil, `
defaults: {azure: team}
credentials:
  team:
    type: azure
    kind: client-secret
    tenantId: %[1]s
    clientId: %[2]s
    secretFile: %[3]s
    authority: %[4]s
    scopes: [%[5]s]
    endpoints: [%[4]s]
    users: [alice@example.com, "group:platform-team"]
  stale:
    type: azure
    kind: client-secret
    tenantId: %[1]s
    clientId: %[2]s
    secretFile: %[6]s
    authority: %[4]s
    scopes: [%[5]s]
    endpoints: [%[4]s]
    users: [alice@example.com]
`, tenant, clientID, filepath.Join(dir, "team.secret"), endpoint, aksim.DemoSubscription, filepath.Join(dir, "stale.secret")), 0o600); err != nil {
		t.Fatal(err)
	}

	// 3. API tokens, made with kpool token create (their stdout is the
	// token, the one place it is meant to be shown).
	db := "sqlite:" + filepath.Join(dir, "kpool.db")
	token := func(step string, args ...string) string {
		t.Helper()
		out, errOut, err := execute("", append([]string{"token", "create", "--database", db}, args...)...)
		record(step, "", errOut, err)
		secret := strings.TrimSpace(out)
		if err != nil || !auth.LooksLikeToken(secret) {
			t.Fatalf("%s: %v %q", step, err, out)
		}
		secrets[step] = secret
		return secret
	}
	alice := token("alice's user token", "--user", "alice@example.com", "--group", "platform-team")
	admin := token("admin token", "--user", "root@example.com", "--role", "admin", "--expires", "1d")
	controller := token("controller token", "--user", "ci@example.com", "--role", "controller", "--controller-name", "gcp-nodepool-controller", "--platform", "gcp", "--platform", "azure")
	mallory := token("mallory's token, revoked later", "--user", "mallory@example.com")
	unknown, _ := auth.NewTokenSecret() // never stored
	secrets["unknown token"] = unknown

	// 4. People: an issuer's ID tokens, one for bob in the platform team
	// and one signed by another key.
	issuer := oidctest.New(t)
	bob := issuer.Token(t, "kpool", "bob@example.com", "Platform-Team")
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	forged := issuer.Sign(t, map[string]any{"iss": issuer.URL, "aud": "kpool", "sub": "x", "email": "root@example.com",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}, otherKey)
	secrets["bob's ID token"], secrets["forged ID token"] = bob, forged

	// 5. kpool serve, in token mode, as its command line runs it.
	log := newLogWatch()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(log)
		root.SetErr(log)
		root.SetArgs([]string{"serve", "--database", db, "--listen", "127.0.0.1:0", "--auth", "token",
			"--credentials", credsFile, "--allowed-endpoints", endpoint, "--oidc-issuer", issuer.URL, "--oidc-audience", "kpool",
			"--resync-fast", "20ms", "--rate", "0", "--token-cache", "0"}) // revocations hold at once (TestTokenCache has the TTL)
		served <- root.ExecuteContext(ctx)
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-served; err != nil {
				t.Errorf("kpool serve: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	server := log.waitFor(t, regexp.MustCompile(`msg="kpool serving" url=(\S+) database=(\S+) controllers=true auth=token`))[1]
	as := func(token string, args ...string) []string {
		return append(args, "--server", server, "--token", token)
	}

	// 6. Through the CLI: alice registers the emulator's cluster with the
	// team credential, makes a pool, scales it; bob (by group, with his ID
	// token) registers one too; mallory may not use the credential, and is
	// then revoked.
	var cl kpool.Cluster
	out := mustCLI("alice: cluster create", as(alice, "cluster", "create", "prod", "--platform", "azure",
		"--subscription-id", aksim.DemoSubscription, "--resource-group", aksim.DemoResourceGroup, "--cluster-name", aksim.DemoCluster,
		"--location", aksim.DemoLocation, "--endpoint", endpoint, "--credential", "team", "-o", "json")...)
	if err := json.Unmarshal([]byte(out), &cl); err != nil {
		t.Fatal(err)
	}
	var pool kpool.NodePool
	out = mustCLI("alice: nodepool create --wait", as(alice, "nodepool", "create", "web", "--cluster", cl.ID,
		"--machine-type", "Standard_D4s_v5", "--count", "3", "--zones", "1", "--wait", "--timeout", "1m", "-o", "json")...)
	if err := json.Unmarshal([]byte(out), &pool); err != nil || pool.Status.Phase != kpool.PhaseReady {
		t.Fatalf("pool after create --wait: %v %+v", err, pool.Status)
	}
	mustCLI("alice: nodepool scale --wait", as(alice, "nodepool", "scale", pool.ID, "--count", "5", "--wait", "--timeout", "1m")...)
	if st, ok := emu.Pool(aksim.DemoSubscription, aksim.DemoResourceGroup, aksim.DemoCluster, pool.ProviderName); !ok || st.ReadyNodes != 5 {
		t.Fatalf("the emulator's pool after the scale: %+v", st)
	}
	bobs := mustCLI("bob (ID token, by group): cluster create", as(bob, "cluster", "create", "bobs", "--platform", "azure",
		"--subscription-id", aksim.DemoSubscription, "--resource-group", aksim.DemoResourceGroup, "--cluster-name", "bobs-aks",
		"--location", aksim.DemoLocation, "--endpoint", endpoint, "--credential", "team", "-o", "json")...)
	if _, err := cli("mallory: cluster create with a credential not hers", as(mallory, "cluster", "create", "evil", "--platform", "azure",
		"--subscription-id", aksim.DemoSubscription, "--resource-group", "rg", "--cluster-name", "evil",
		"--endpoint", endpoint, "--credential", "team")...); kpool.ErrorCode(err) != kpool.CodeForbidden {
		t.Fatalf("mallory's create: %v, want FORBIDDEN", err)
	}
	list := mustCLI("token list", "token", "list", "--database", db)
	var malloryID string
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, "mallory@example.com") {
			malloryID = strings.Fields(line)[0]
		}
	}
	mustCLI("token revoke", "token", "revoke", malloryID, "--database", db)
	if _, err := cli("mallory, revoked: cluster list", as(mallory, "cluster", "list")...); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Fatalf("a revoked token: %v, want UNAUTHORIZED", err)
	}
	if _, err := cli("unknown token: nodepool list", as(unknown, "nodepool", "list")...); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Fatalf("an unknown token: %v, want UNAUTHORIZED", err)
	}
	mustCLI("controller: nodepool get", as(controller, "nodepool", "get", pool.ID)...)
	if !strings.Contains(mustCLI("admin: cluster list", as(admin, "cluster", "list")...), "bobs") {
		t.Fatal("the admin does not see bob's cluster")
	}

	// A credential whose secret the authority refuses: the controllers
	// fail the pool with the authority's answer, which --wait prints.
	var stale kpool.Cluster
	out = mustCLI("alice: cluster create (stale credential)", as(alice, "cluster", "create", "old", "--platform", "azure",
		"--subscription-id", aksim.DemoSubscription, "--resource-group", aksim.DemoResourceGroup, "--cluster-name", aksim.DemoCluster+"-old",
		"--location", aksim.DemoLocation, "--endpoint", endpoint, "--credential", "stale", "-o", "json")...)
	if err := json.Unmarshal([]byte(out), &stale); err != nil {
		t.Fatal(err)
	}
	before := seen.Len()
	if _, err := cli("alice: nodepool create --wait (stale credential)", as(alice, "nodepool", "create", "legacy", "--cluster", stale.ID,
		"--machine-type", "Standard_D4s_v5", "--count", "1", "--wait", "--timeout", "1m")...); err == nil ||
		!strings.Contains(seen.String()[before:], "Error: nodepool legacy") || !strings.Contains(seen.String()[before:], "AADSTS7000215") {
		t.Fatalf("a pool on a credential the authority refuses: %v\n%s", err, seen.String()[before:])
	}
	// The CLI's errors are scrubbed too: an id that is a token.
	before = seen.Len()
	if _, err := cli("alice: cluster get with her token as the id", as(alice, "cluster", "get", alice)...); kpool.ErrorCode(err) != kpool.CodeNotFound ||
		!strings.Contains(seen.String()[before:], "Error: NOT_FOUND") {
		t.Fatalf("cluster get TOKEN: %v\n%s", err, seen.String()[before:])
	}

	// 7. Through the HTTP API: tokens in the wrong places, and bad ones.
	refused := map[string]string{}
	raw := func(step, method, path, reqBody string, header map[string]string, want int) {
		t.Helper()
		req, err := http.NewRequest(method, server+path, strings.NewReader(reqBody))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		req.Header.Set("X-Request-ID", "leak-"+strings.ReplaceAll(step, " ", "-"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d: %s", step, resp.StatusCode, want, body)
		}
		// An answer is not a log (a 404 names the id the caller sent), but
		// a refusal never repeats the credential it refused.
		if want == http.StatusUnauthorized {
			refused[step] = string(body)
		}
	}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	httpSteps := []struct {
		name, method, path string
		header             map[string]string
		status             int
		body               string
	}{
		{"token in the query", "GET", "/api/v1/clusters?token=" + alice, nil, 401, ""},
		{"access_token in the query", "GET", "/api/v1/clusters?limit=5&access_token=" + bob, bearer(alice), 400, ""},
		{"bare token in the query", "GET", "/api/v1/nodepools?" + admin, nil, 401, ""},
		{"token in the path", "GET", "/api/v1/clusters/" + alice, bearer(admin), 400, ""},
		{"X-User-Email in token mode", "GET", "/api/v1/clusters", map[string]string{"X-User-Email": "alice@example.com"}, 401, ""},
		{"token without its scheme", "GET", "/api/v1/clusters", map[string]string{"Authorization": alice}, 401, ""},
		{"token as basic credentials", "GET", "/api/v1/clusters", map[string]string{"Authorization": "Basic " + alice}, 401, ""},
		{"unknown token", "GET", "/api/v1/clusters", bearer(unknown), 401, ""},
		{"revoked token", "GET", "/api/v1/clusters", bearer(mallory), 401, ""},
		{"forged ID token", "GET", "/api/v1/clusters", bearer(forged), 401, ""},
		{"ID token", "GET", "/api/v1/clusters", bearer(bob), 200, ""},
		{"controller reporting as a name not granted", "PUT", "/api/v1/nodepools/" + pool.ID + "/status", bearer(controller), 403,
			`{"controller_name":"aks-nodepool-controller","observed_generation":1,"conditions":[]}`},
	}
	for _, s := range httpSteps {
		raw(s.name, s.method, s.path, s.body, s.header, s.status)
	}

	// 8. Delete what was made, then stop the server: its log is complete.
	mustCLI("alice: nodepool delete --wait", as(alice, "nodepool", "delete", pool.ID, "--wait", "--timeout", "1m")...)
	mustCLI("alice: cluster delete", as(alice, "cluster", "delete", cl.ID)...)
	var bc kpool.Cluster
	if err := json.Unmarshal([]byte(bobs), &bc); err != nil {
		t.Fatal(err)
	}
	mustCLI("bob: cluster delete", as(bob, "cluster", "delete", bc.ID)...)
	stop()
	serverLog := log.String()
	fmt.Fprintf(&seen, "== the server's log\n%s", serverLog)

	// The cloud was called with the client secret's tokens, and only
	// those.
	issued := emu.IssuedTokens()
	w.mu.Lock()
	bearers, tokenCalls, armCalls := w.bearers, w.tokenCalls, w.armCalls
	w.mu.Unlock()
	if len(issued) == 0 || len(tokenCalls) < 2 || len(armCalls) == 0 {
		t.Fatalf("issued %d tokens; %d token requests, %d ARM calls", len(issued), len(tokenCalls), len(armCalls))
	}
	for b := range bearers {
		if !strings.HasPrefix(b, "cloudsim.") {
			t.Fatalf("ARM was sent a bearer token the emulator did not issue")
		}
		secrets["cloud access token "+b[:12]] = b
	}
	for _, tok := range issued {
		secrets["cloud access token "+tok[:12]] = tok
	}
	if !strings.Contains(strings.Join(armCalls, "\n"), "PUT /subscriptions/"+aksim.DemoSubscription) {
		t.Fatalf("no agent pool was written at ARM: %q", armCalls)
	}

	// Every step left its line in the log.
	for _, want := range []string{
		`msg="kpool serving" url=` + regexp.QuoteMeta(server) + ` database=sqlite:\S+ controllers=true auth=token`,
		`msg="shards gained"`,
		`msg=request method=POST path=/api/v1/clusters status=201 .*user=alice@example.com`,
		`msg=request method=POST path=/api/v1/(clusters/\S+/)?nodepools status=201 .*user=alice@example.com`,
		`msg=request method=(PUT|PATCH) path=/api/v1/nodepools/` + pool.ID + ` status=200 .*user=alice@example.com`,
		`msg=request method=GET path=/api/v1/nodepools/` + pool.ID + `/status status=200 .*user=alice@example.com`,
		`msg=request method=POST path=/api/v1/clusters status=201 .*user=bob@example.com`,
		`msg=request method=POST path=/api/v1/clusters status=403 .*user=mallory@example.com`,
		`msg=request method=GET path=/api/v1/clusters status=401 .*user=""`,
		`msg=request method=GET path="?/api/v1/nodepools(\?limit=100)?"? status=401 .*user=""`,
		`msg=request method=GET path=/api/v1/nodepools/` + pool.ID + ` status=200 .*user=ci@example.com`,
		`msg=request method=GET path="?/api/v1/clusters(\?limit=100)?"? status=200 .*user=root@example.com`,
		`msg=request method=POST path=/api/v1/clusters status=201 .*user=alice@example.com(.|\n)*msg=request method=POST path=/api/v1/clusters status=201 .*user=alice@example.com`,
		// A token given as a cluster: looked up by name, never logged.
		`msg=request method=GET path="/api/v1/clusters\?limit=100&name=kpool_xxxxx" status=200 .*user=alice@example.com`,
		`msg=request method=DELETE path=/api/v1/nodepools/` + pool.ID + ` status=202 .*user=alice@example.com`,
		`msg=request method=DELETE path=/api/v1/clusters/` + cl.ID + ` status=204 .*user=alice@example.com`,
		`msg=request method=DELETE path=/api/v1/clusters/` + bc.ID + ` status=204 .*user=bob@example.com`,
		`msg="shutting down"`,
	} {
		if !regexp.MustCompile(want).MatchString(serverLog) {
			t.Errorf("no log line matching %s", want)
		}
	}
	for _, s := range httpSteps {
		id := "leak-" + strings.ReplaceAll(s.name, " ", "-")
		if !regexp.MustCompile(fmt.Sprintf(`msg=request method=%s .*status=%d .*request_id=%s `, s.method, s.status, regexp.QuoteMeta(id))).MatchString(serverLog) {
			t.Errorf("no access log line for %q (%s, %d)", s.name, id, s.status)
		}
	}
	for _, want := range []string{`path="/api/v1/clusters?token=xxxxx"`, `path="/api/v1/clusters?limit=5&access_token=xxxxx"`,
		`path=/api/v1/nodepools?xxxxx`, `path=/api/v1/clusters/kpool_xxxxx`} {
		if !strings.Contains(serverLog, want) {
			t.Errorf("the log lacks %s", want)
		}
	}

	// And no secret, nor 12 characters of one, in any of it.
	all := seen.String()
	for step, body := range refused {
		all += "== the answer to " + step + "\n" + body + "\n"
	}
	for what, secret := range secrets {
		body := strings.TrimPrefix(secret, kpool.TokenPrefix)
		if len(body) < 12 {
			t.Fatalf("%s is too short to look for", what)
		}
		for i := 0; i+12 <= len(body); i++ {
			if at := strings.Index(all, body[i:i+12]); at >= 0 {
				from, to := max(at-300, 0), min(at+300, len(all))
				t.Fatalf("%s leaked (%q at byte %d):\n…%s…", what, body[i:i+12], at, all[from:to])
			}
		}
	}
	if testing.Verbose() {
		t.Logf("%d secrets, none in %d bytes of output and log", len(secrets), len(all))
	}
}
