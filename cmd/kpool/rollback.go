package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
)

const poolRollbackLong = `Undo a node pool's replacement.

A change the provider makes only with a new pool (an AKS pool's vmSize,
say) is carried out, when the pool's spec.updateStrategy.replacement is
Surge (--replacement Surge), by a successor pool: it is created, its nodes
come up Ready, the old nodes are drained onto it, and the old pool is
deleted. kpool nodepool get shows where it is (Replacement). Rollback asks
for it to be undone: the old nodes are uncordoned, the successor drained and
deleted, and the old pool goes on serving. The spec is not changed: the
generation is not tried again until the spec changes.

A pool with no replacement under way, or one already deleting the old pool
(step Retiring), is a CONFLICT. Asking again changes nothing. --wait waits
until the replacement is RolledBack.`

func newPoolRollback(f *clientFlags) *cobra.Command {
	var wf waitFlags
	cmd := &cobra.Command{
		Use:     "rollback ID",
		Short:   "Undo a node pool's replacement by a successor pool",
		Long:    poolRollbackLong,
		Example: "  kpool nodepool rollback web --cluster prod --wait",
		Args:    idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := wf.check(cmd.Flags(), false); err != nil {
				return err
			}
			c := f.writer(cmd)
			p, err := c.RollbackNodePool(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if wf.wait {
				w := newWaiter(cmd, c, f.clock.Tick, p, false)
				w.rollback = true
				if rp := p.Status.Replacement; rp != nil {
					w.gen = rp.Generation
				}
				if p, err = w.run(cmd.Context(), wf.timeout); err != nil {
					return err
				}
			}
			if !f.table() {
				return f.print(cmd, p, nil)
			}
			rp := p.Status.Replacement
			switch {
			case rp != nil && rp.Step == kpool.StepRolledBack:
				fmt.Fprintf(cmd.OutOrStdout(), "nodepool %s rolled back: %s serves, %s is gone\n", p.Name, rp.From, rp.To)
			case rp != nil:
				fmt.Fprintf(cmd.OutOrStdout(), "nodepool %s: rollback of %s -> %s requested (step %s)\n", p.Name, rp.From, rp.To, rp.Step)
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "nodepool %s: rollback requested\n", p.Name)
			}
			return nil
		},
	}
	wf.register(cmd.Flags(), "is rolled back")
	return cmd
}

// strategyView shows a pool's spec.updateStrategy, defaults filled in:
// "Surge (surge 1, drain 30m0s), on stuck Stop".
func strategyView(u *kpool.UpdateStrategy) string {
	if !u.Surge() {
		return fmt.Sprintf("Refuse (a change that needs a new pool is refused), drain %s, on stuck %s", u.Drain(), u.Stuck())
	}
	return fmt.Sprintf("Surge (%s), on stuck %s", u.Describe(), u.Stuck())
}

// replacementView shows a pool's status.replacement under get's
// "Replacement" heading: its step, from -> to, the Ready nodes of each,
// what blocks it and its message.
func replacementView(w io.Writer, name string, rp *kpool.Replacement, now time.Time) {
	if rp == nil {
		return
	}
	kv := func(k string, v any) { fmt.Fprintf(w, "%s:\t%v\n", k, v) }
	step := string(rp.Step)
	if rp.RollbackRequestedAt != nil && rp.Active() && rp.Step != kpool.StepRollingBack {
		step += " (rollback requested " + age(*rp.RollbackRequestedAt, now) + " ago)"
	}
	kv("Replacement", fmt.Sprintf("%s, generation %d, started %s", step, rp.Generation, when(rp.StartedAt, now)))
	kv("  From -> to", orDash(rp.From)+" -> "+orDash(rp.To))
	kv("  Ready nodes", fmt.Sprintf("old %d, new %d", rp.OldNodes, rp.NewNodes))
	if rp.SoakUntil != nil && rp.Step == kpool.StepSoaking {
		kv("  Soak until", when(*rp.SoakUntil, now))
	}
	for i, b := range rp.Blocking {
		k := "  Blocking"
		if i > 0 {
			k = "  "
		}
		kv(k, oneLine(b))
	}
	if rp.Message != "" {
		kv("  Message", oneLine(rp.Message))
	}
	if rp.FinishedAt != nil {
		kv("  Finished", when(*rp.FinishedAt, now))
	}
	if rp.Active() && rp.Step != kpool.StepRetiring && rp.RollbackRequestedAt == nil && rp.Step != kpool.StepRollingBack {
		kv("  Undo", "kpool nodepool rollback "+name)
	}
}

// replacementLine is --wait's progress line for a pool being replaced:
// "nodepool web: Draining  old 3, new 3 ready  (PodDisruptionBudget
// default/web)", cut so that with the elapsed time it fits 80 columns.
func replacementLine(name string, rp *kpool.Replacement) string {
	line := fmt.Sprintf("nodepool %s: %s  old %d, new %d ready", name, rp.Step, rp.OldNodes, rp.NewNodes)
	switch {
	case len(rp.Blocking) > 0:
		line += "  (" + oneLine(strings.Join(rp.Blocking, "; ")) + ")"
	case rp.Message != "":
		line += "  (" + oneLine(rp.Message) + ")"
	}
	return fit(line, waitLineWidth)
}

// waitLineWidth is the width of --wait's progress line before the elapsed
// time ("  1h2m3s"): 80 columns in all.
const waitLineWidth = 70

// judgeReplacement is judge for a pool whose replacement carries out the
// generation waited for: done when it is Done (or, for a rollback, when it
// is RolledBack); an error when it stopped or was rolled back instead.
func (w *waiter) judgeReplacement(rp *kpool.Replacement) (bool, error) {
	w.show(replacementLine(w.pool.Name, rp))
	why := rp.Message
	if len(rp.Blocking) > 0 {
		why = strings.TrimPrefix(why+"; blocked by "+strings.Join(rp.Blocking, "; "), "; ")
	}
	who := fmt.Sprintf("nodepool %s (%s)", w.pool.Name, w.pool.ID)
	if rp.Step == kpool.StepRollingBack {
		w.rollingBack = true
	}
	switch {
	case w.rollback && rp.Step == kpool.StepRolledBack:
		return true, nil
	case w.rollback && rp.Step == kpool.StepStopped && !w.rollingBack:
		return false, nil // stopped before: the rollback has not begun yet
	case w.rollback && rp.Step == kpool.StepStopped:
		return false, fmt.Errorf("%s: the rollback of the replacement of %s by %s stopped: %s", who, rp.From, rp.To, orDash(why))
	case w.rollback && rp.Step == kpool.StepDone:
		return false, fmt.Errorf("%s: the replacement of %s by %s finished before the rollback: %s is the pool now", who, rp.From, rp.To, rp.To)
	case rp.Step == kpool.StepDone:
		return true, nil
	case rp.Step == kpool.StepStopped:
		return false, fmt.Errorf("%s: the replacement of %s by %s stopped: %s; the old pool serves (kpool nodepool rollback %s removes the successor; a new spec starts over)",
			who, rp.From, rp.To, orDash(why), w.pool.Name)
	case rp.Step == kpool.StepRolledBack:
		return false, fmt.Errorf("%s: the replacement of %s by %s was rolled back: %s; %s serves, with the settings from before generation %d",
			who, rp.From, rp.To, orDash(why), rp.From, rp.Generation)
	}
	return false, nil
}
