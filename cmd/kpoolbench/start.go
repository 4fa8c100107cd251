package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// What a run makes before it measures (directories, databases, servers),
// each undone on exit unless -keep.

// onExit runs f when the run ends, unless -keep keeps what it made.
func (b *bench) onExit(f func()) {
	if !b.cfg.keep {
		b.cleanups = append(b.cleanups, f)
	}
}

// cleanUp undoes what the run made, last first.
func (b *bench) cleanUp() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
}

// makeDirs makes the output directory (a temporary one unless -out names
// it) and the run's working directory with its Lua scripts.
func (b *bench) makeDirs() error {
	var err error
	if b.out = b.cfg.out; b.out == "" {
		b.out, err = os.MkdirTemp("", "kpoolbench-out-")
	} else {
		err = os.MkdirAll(b.out, 0o755)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(b.out, "wrk"), 0o755); err != nil {
		return err
	}
	progress("output directory %s", b.out)
	if b.work, err = os.MkdirTemp("", "kpoolbench-work-"); err != nil {
		return err
	}
	b.onExit(func() { os.RemoveAll(b.work) })
	b.postLua, b.putLua, err = writeScripts(b.work)
	return err
}

// createDatabases creates kpool's PostgreSQL database (when a server runs
// on PostgreSQL) and pgbench's (unless skipped), dropped on exit.
func (b *bench) createDatabases(ctx context.Context) error {
	usePostgres := slices.Contains(b.cfg.stores, "postgres")
	if !usePostgres && b.cfg.skip["pgbench"] {
		return nil
	}
	var err error
	if b.adminURL, err = findAdmin(ctx, b.cfg.pgURL); err != nil {
		return err
	}
	stamp := time.Now().Unix()
	for _, db := range []struct {
		use  bool
		kind string
		name *string
	}{{usePostgres, "kpool", &b.kpoolDB}, {!b.cfg.skip["pgbench"], "pgbench", &b.benchDB}} {
		if !db.use {
			continue
		}
		name := fmt.Sprintf("kpoolbench_%d_%s", stamp, db.kind)
		if err := createDatabase(ctx, b.adminURL, name); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
		*db.name = name
		progress("created database %s", name)
		b.onExit(func() {
			drop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := dropDatabase(drop, b.adminURL, name); err != nil {
				progress("could not drop database %s: %v", name, err)
				return
			}
			progress("dropped database %s", name)
		})
	}
	return nil
}

// startServers builds kpool and starts one server per store, stopped on
// exit.
func (b *bench) startServers(ctx context.Context) error {
	for _, store := range b.cfg.stores {
		database := "sqlite:" + filepath.Join(b.work, "bench.db")
		if store == "postgres" {
			database = databaseURL(b.adminURL, b.kpoolDB)
		}
		s, err := startServer(ctx, b.bin, store, database, filepath.Join(b.out, "kpool-"+store+".log"), b.cfg.keep)
		if err != nil {
			return err
		}
		b.servers = append(b.servers, s)
		b.onExit(func() { s.stop(); progress("stopped kpool serve (%s)", store) })
		b.memStart[store], _ = readMemory(s.pid())
		progress("kpool serve (%s) at %s, pprof %s, pid %d, log %s", store, s.url, s.pprof, s.pid(), s.logPath)
	}
	return nil
}
