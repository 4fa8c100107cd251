package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// walkStep is one command of README's walk-through and what its answer must
// be for the walk-through to do what README says.
type walkStep struct {
	name string
	// markers are parts of the command that say which step it is, so that
	// a README command moved or added fails the test by name.
	markers []string
	check   func(r shellResult, w *walkState) error
}

// walkState is what one step learns and a later one checks.
type walkState struct {
	created string // the id of the pool the create answered with
	pool    string // $POOL, as README's one-liner read it
}

// walkthroughSteps are README's walk-through commands, in order.
var walkthroughSteps = []walkStep{
	{"register the GKE cluster", []string{"-X POST", "/api/v1/clusters"}, func(r shellResult, _ *walkState) error {
		var c kpool.Cluster
		return answer(r, 201, &c)
	}},
	{"create the pool", []string{"-X POST", `/api/v1/nodepools"`}, func(r shellResult, w *walkState) error {
		var p kpool.NodePool
		if err := answer(r, 201, &p); err != nil {
			return err
		}
		if p.Generation != 1 || p.Status.Phase != kpool.PhasePending {
			return fmt.Errorf("want generation 1 and phase Pending, got generation %d and phase %s", p.Generation, p.Status.Phase)
		}
		w.created = p.ID
		return nil
	}},
	{"read the pool's id into POOL", []string{"POOL=$(", "?cluster_id=", "python3"}, func(r shellResult, w *walkState) error {
		w.pool = strings.TrimSpace(r.stdout)
		switch {
		case r.exit != 0 || !slices.Equal(r.statuses, []int{200}):
			return fmt.Errorf("want exit status 0 and HTTP 200")
		case !kpool.IsUUID(w.pool):
			return fmt.Errorf("POOL is %q, not a UUID", w.pool)
		case w.pool != w.created:
			return fmt.Errorf("POOL is %s, the created pool %s", w.pool, w.created)
		}
		return nil
	}},
	{"read the pool's status", []string{"curl -H", `/nodepools/$POOL/status"`}, func(r shellResult, w *walkState) error {
		var d service.StatusDocument
		if err := answer(r, 200, &d); err != nil {
			return err
		}
		// README says why: this kpool has a GKE driver but runs no
		// controller, so it awaits a report.
		ctl, _ := condition(d.Status, kpool.ConditionController)
		if d.NodePoolID != w.pool || d.Status.Phase != kpool.PhasePending || ctl.Status != kpool.ConditionUnknown || ctl.Reason != "AwaitingReport" {
			return fmt.Errorf("want pool %s Pending with Controller=Unknown (AwaitingReport), got pool %s %s with %+v", w.pool, d.NodePoolID, d.Status.Phase, ctl)
		}
		return nil
	}},
	{"scale the pool", []string{"-X PUT", `/nodepools/$POOL"`}, func(r shellResult, w *walkState) error {
		var p kpool.NodePool
		if err := answer(r, 200, &p); err != nil {
			return err
		}
		s := p.Spec
		if p.ID != w.pool || p.Generation != 2 || p.Status.Phase != kpool.PhasePending {
			return fmt.Errorf("want pool %s at generation 2, Pending; got %s at generation %d, %s", w.pool, p.ID, p.Generation, p.Status.Phase)
		}
		// What the PUT left out is kept, as README says.
		if s.NodeCount == nil || *s.NodeCount != 6 || s.Autoscaling == nil || !s.Autoscaling.Enabled ||
			s.Platform.GCP == nil || s.Platform.GCP.DiskType != "pd-ssd" || len(s.Platform.GCP.Zones) != 2 {
			return fmt.Errorf("want 6 nodes, autoscaling, disk type and zones kept; got %+v", s)
		}
		return nil
	}},
	{"the controller's report", []string{"-X PUT", `/nodepools/$POOL/status"`}, func(r shellResult, w *walkState) error {
		var d service.StatusDocument
		if err := answer(r, 200, &d); err != nil {
			return err
		}
		if d.NodePoolID != w.pool || d.Ignored != "" || d.Status.Phase != kpool.PhaseReady {
			return fmt.Errorf("want the report on pool %s stored and the pool Ready; got pool %s, ignored %q, %s", w.pool, d.NodePoolID, d.Ignored, d.Status.Phase)
		}
		return nil
	}},
	{"list the Ready pools", []string{"?limit=10&status=Ready"}, func(r shellResult, w *walkState) error {
		var l api.NodePoolList
		if err := answer(r, 200, &l); err != nil {
			return err
		}
		if len(l.NodePools) != 1 || l.NodePools[0].ID != w.pool || l.NodePools[0].Status.Phase != kpool.PhaseReady {
			return fmt.Errorf("want exactly pool %s, Ready; got %d pools", w.pool, len(l.NodePools))
		}
		return nil
	}},
}

// matches reports whether command is the one s is about.
func (s walkStep) matches(command string) bool {
	for _, m := range s.markers {
		if !strings.Contains(command, m) {
			return false
		}
	}
	return true
}

// answer checks that r made one request, answered with status want, and
// decodes the body into v.
func answer(r shellResult, want int, v any) error {
	if r.exit != 0 || !slices.Equal(r.statuses, []int{want}) {
		return fmt.Errorf("want exit status 0 and HTTP %d", want)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %v", err)
	}
	return nil
}

// condition returns the condition of type t in st.
func condition(st kpool.NodePoolStatus, t string) (kpool.Condition, bool) {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return kpool.Condition{}, false
}
