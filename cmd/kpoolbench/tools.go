package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// missingTools names the load tools that do not run here. wrk has no
// version flag that exits 0, so being on PATH is enough; Debian's pgbench
// on PATH may be a wrapper without a PostgreSQL version behind it, so it
// must answer --version.
func missingTools(ctx context.Context, pgbench bool) []string {
	var missing []string
	if _, err := exec.LookPath("wrk"); err != nil {
		missing = append(missing, "wrk")
	}
	if pgbench && exec.CommandContext(ctx, "pgbench", "--version").Run() != nil {
		missing = append(missing, "pgbench")
	}
	return missing
}

// checkTools makes sure wrk (and pgbench, unless its ceilings are skipped)
// run. As root on a Debian-like system it installs them with apt-get: wrk,
// and pgbench from postgresql-client (PostgreSQL 16 on) or
// postgresql-contrib (before, where the server package has it).
func checkTools(ctx context.Context, pgbench bool) error {
	missing := missingTools(ctx, pgbench)
	if len(missing) == 0 {
		return nil
	}
	hint := "install them: on Debian or Ubuntu, apt-get install -y wrk postgresql-client (and postgresql-contrib if pgbench is still missing; `dpkg -S pgbench` tells which package has it)"
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		return fmt.Errorf("%s not found: %s", strings.Join(missing, " and "), hint)
	}
	for _, pkgs := range [][]string{{"wrk", "postgresql-client"}, {"postgresql-contrib"}} {
		if len(missingTools(ctx, pgbench)) == 0 {
			break
		}
		if err := aptInstall(ctx, pkgs...); err != nil {
			progress("%v", err)
		}
	}
	if missing := missingTools(ctx, pgbench); len(missing) > 0 {
		return fmt.Errorf("%s still not found after apt-get: %s", strings.Join(missing, " and "), hint)
	}
	return nil
}

// aptInstall installs packages with apt-get, refreshing the package lists
// once if the first attempt fails.
func aptInstall(ctx context.Context, pkgs ...string) error {
	install := func() error {
		progress("apt-get install -y %s", strings.Join(pkgs, " "))
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get install %s: %w: %s", strings.Join(pkgs, " "), err, lastLines(out, 3))
		}
		return nil
	}
	if install() == nil {
		return nil
	}
	progress("apt-get update")
	if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w: %s", err, lastLines(out, 3))
	}
	return install()
}
