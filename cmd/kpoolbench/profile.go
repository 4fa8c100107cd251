package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"
)

// startProfile fetches a CPU profile from the server's pprof address into
// path while a wrk run of duration d goes on: it starts a second into the run
// and lasts d-2s (at least 1s), so it sees neither the start nor the end of
// the load. The returned function waits for it.
func startProfile(ctx context.Context, pprofURL string, d time.Duration, path string) func() error {
	seconds := max(1, int(d.Seconds())-2)
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			if err := sleep(ctx, time.Second); err != nil {
				return err
			}
			req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%sprofile?seconds=%d", pprofURL, seconds), nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				return fmt.Errorf("GET %s: %s: %s", req.URL, resp.Status, b)
			}
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, resp.Body); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}()
	}()
	return func() error { return <-done }
}

// pprofTop is `go tool pprof -top -nodecount=25` of the profile, with the
// server's binary so that its symbols resolve.
func pprofTop(ctx context.Context, bin, profile string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=25", bin, profile).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w: %s", profile, err, lastLines(out, 3))
	}
	return string(out), nil
}
