package kpool

import (
	"testing"
	"time"
)

func report(name string, gen int64, conds ...string) ControllerStatus {
	cs := ControllerStatus{ControllerName: name, ObservedGeneration: gen}
	for i := 0; i+1 < len(conds); i += 2 {
		cs.Conditions = append(cs.Conditions, Condition{Type: conds[i], Status: conds[i+1], Message: conds[i] + " says " + conds[i+1]})
	}
	return cs
}

// waiting is a report of a controller that cannot reach the pool's
// cluster.
func waiting(name string, gen int64) ControllerStatus {
	return ControllerStatus{ControllerName: name, ObservedGeneration: gen, Conditions: []Condition{
		{Type: ConditionReady, Status: ConditionUnknown, Reason: ReasonClusterUnreachable, Message: "cluster prod is not reachable: no credential"},
		{Type: ConditionProgressing, Status: ConditionFalse, Reason: ReasonClusterUnreachable}}}
}

func TestAggregate(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	deleting := now.Add(-time.Minute)
	tests := []struct {
		name        string
		gen         int64
		deleting    bool
		lastReady   int64
		reports     []ControllerStatus
		phase       Phase
		observed    int64
		health      Health
		wantCondOn  []string // conditions that must be True
		wantCondOff []string // conditions that must be False
	}{
		{"no reports", 1, false, 0, nil, PhasePending, 0, HealthUnknown, nil, []string{"Ready", "Progressing"}},
		{"provisioning", 1, false, 0, []ControllerStatus{report("a", 1, "Ready", "False", "Progressing", "True")}, PhaseProvisioning, 1, HealthUnknown, []string{"Progressing"}, []string{"Ready"}},
		{"ready", 1, false, 0, []ControllerStatus{report("a", 1, "Ready", "True")}, PhaseReady, 1, HealthHealthy, []string{"Ready", "Supported"}, []string{"Progressing", "Degraded"}},
		{"spec changed since", 2, false, 1, []ControllerStatus{report("a", 1, "Ready", "True")}, PhaseUpdating, 1, HealthUnknown, []string{"Progressing"}, []string{"Ready"}},
		{"one of two behind", 2, false, 1, []ControllerStatus{report("a", 2, "Ready", "True"), report("b", 1, "Ready", "True")}, PhaseUpdating, 1, HealthUnknown, nil, []string{"Ready"}},
		{"two ready", 2, false, 1, []ControllerStatus{report("a", 2, "Ready", "True"), report("b", 2, "Ready", "True")}, PhaseReady, 2, HealthHealthy, []string{"Ready"}, nil},
		{"degraded", 1, false, 1, []ControllerStatus{report("a", 1, "Ready", "False", "Degraded", "True")}, PhaseDegraded, 1, HealthUnhealthy, []string{"Degraded"}, []string{"Ready"}},
		{"not supported", 1, false, 0, []ControllerStatus{report("a", 1, "Ready", "False", "Supported", "False")}, PhaseFailed, 1, HealthUnhealthy, nil, []string{"Supported", "Ready"}},
		{"stuck", 1, false, 0, []ControllerStatus{report("a", 1, "Ready", "False", "Progressing", "False")}, PhaseFailed, 1, HealthUnhealthy, []string{"Degraded"}, []string{"Ready"}},
		{"old failure does not count", 2, false, 0, []ControllerStatus{report("a", 1, "Ready", "False", "Supported", "False")}, PhaseProvisioning, 1, HealthUnknown, nil, []string{"Ready"}},
		{"drifted", 1, false, 1, []ControllerStatus{report("a", 1, "Ready", "True", "Drifted", "True")}, PhaseReady, 1, HealthHealthy, []string{"Drifted"}, nil},
		{"deleting", 3, true, 2, []ControllerStatus{report("a", 3, "Ready", "True")}, PhaseDeleting, 3, HealthUnknown, []string{"Progressing"}, []string{"Ready"}},
		{"cluster unreachable, never ready", 1, false, 0, []ControllerStatus{waiting("a", 0)}, PhasePending, 0, HealthUnknown, nil, []string{"Ready", "Progressing", "Degraded"}},
		{"cluster unreachable, was ready", 2, false, 1, []ControllerStatus{waiting("a", 1)}, PhaseDegraded, 1, HealthUnhealthy, []string{"Degraded"}, []string{"Ready", "Progressing"}},
		{"cluster unreachable, deleting", 2, true, 1, []ControllerStatus{waiting("a", 1)}, PhaseDeleting, 1, HealthUnknown, []string{"Progressing"}, []string{"Ready"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &NodePool{Generation: tc.gen}
			if tc.deleting {
				p.DeletionTimestamp = &deleting
			}
			st := Aggregate(p, tc.reports, NodePoolStatus{LastReadyGeneration: tc.lastReady}, now, true)
			if st.Phase != tc.phase || st.ObservedGeneration != tc.observed || st.Health != tc.health {
				t.Fatalf("phase %s observed %d health %s; want %s %d %s (message %q)", st.Phase, st.ObservedGeneration, st.Health, tc.phase, tc.observed, tc.health, st.Message)
			}
			if st.Message == "" {
				t.Fatal("no message")
			}
			conds := map[string]string{}
			for _, c := range st.Conditions {
				conds[c.Type] = c.Status
			}
			for _, c := range tc.wantCondOn {
				if conds[c] != ConditionTrue {
					t.Errorf("condition %s = %q, want True", c, conds[c])
				}
			}
			for _, c := range tc.wantCondOff {
				if conds[c] != ConditionFalse {
					t.Errorf("condition %s = %q, want False", c, conds[c])
				}
			}
		})
	}
}

func TestAggregateKeepsTransitionTimes(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := &NodePool{Generation: 1}
	ready := []ControllerStatus{report("a", 1, "Ready", "True")}
	first := Aggregate(p, ready, NodePoolStatus{}, t0, true)
	second := Aggregate(p, ready, first, t0.Add(time.Hour), true)
	if got := second.Conditions[0]; got.Type != ConditionReady || !got.LastTransitionTime.Equal(t0) {
		t.Fatalf("unchanged Ready moved its transition time: %+v", got)
	}
	p.Generation = 2
	third := Aggregate(p, ready, second, t0.Add(2*time.Hour), true)
	if got := third.Conditions[0]; got.Status != ConditionFalse || !got.LastTransitionTime.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("Ready going False kept the old time: %+v", got)
	}
	if third.LastReadyGeneration != 1 {
		t.Fatalf("last ready generation %d, want 1", third.LastReadyGeneration)
	}
}

// TestAggregateController checks the Controller condition: a pool on a
// platform no controller in this kpool acts on says so until an external
// controller reports, and that report then drives the status as any other.
func TestAggregateController(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		driven       bool
		reports      []ControllerStatus
		phase        Phase
		controller   string // the Controller condition's status
		reason       string // and reason
		noController bool
	}{
		{"driver, no report yet", true, nil, PhasePending, ConditionUnknown, "AwaitingReport", false},
		{"driver, reported", true, []ControllerStatus{report("aks", 1, "Ready", "True")}, PhaseReady, ConditionTrue, "Reporting", false},
		{"no driver, no report", false, nil, PhasePending, ConditionFalse, ReasonNoController, true},
		{"no driver, external controller working", false, []ControllerStatus{report("ext", 1, "Ready", "False", "Progressing", "True")}, PhaseProvisioning, ConditionTrue, "Reporting", false},
		{"no driver, external controller ready", false, []ControllerStatus{report("ext", 1, "Ready", "True")}, PhaseReady, ConditionTrue, "Reporting", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &NodePool{Generation: 1, Spec: NodePoolSpec{Platform: NodePoolPlatform{Type: "gcp"}}}
			st := Aggregate(p, tc.reports, NodePoolStatus{}, now, tc.driven)
			var ctl *Condition
			for i := range st.Conditions {
				if st.Conditions[i].Type == ConditionController {
					ctl = &st.Conditions[i]
				}
			}
			if ctl == nil {
				t.Fatalf("no Controller condition: %+v", st.Conditions)
			}
			if st.Phase != tc.phase || ctl.Status != tc.controller || ctl.Reason != tc.reason || st.NoController() != tc.noController {
				t.Fatalf("phase %s, Controller %s/%s, NoController %v; want %s, %s/%s, %v", st.Phase, ctl.Status, ctl.Reason, st.NoController(),
					tc.phase, tc.controller, tc.reason, tc.noController)
			}
			if tc.noController {
				want := "no controller in this kpool acts on gcp pools; an external controller must report status"
				if st.Message != want || ctl.Message != want || st.Conditions[0].Reason != ReasonNoController {
					t.Fatalf("message %q, condition %q, Ready reason %q; want %q", st.Message, ctl.Message, st.Conditions[0].Reason, want)
				}
			}
		})
	}
}

// TestAggregateSaysWhatHolds: a controller behind the generation, or not
// done deleting, is named with what it says holds it.
func TestAggregateSaysWhatHolds(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	busy := report("aks", 1, "Ready", "False")
	busy.Conditions[0].Message = `the provider reports state "UpgradingNodeImageVersion"`
	st := Aggregate(&NodePool{Generation: 2}, []ControllerStatus{busy}, NodePoolStatus{LastReadyGeneration: 1}, now, true)
	if want := `waiting for generation 2: aks (at generation 1: the provider reports state "UpgradingNodeImageVersion")`; st.Message != want {
		t.Fatalf("message %q, want %q", st.Message, want)
	}
	st = Aggregate(&NodePool{Generation: 2}, []ControllerStatus{report("aks", 1, "Ready", "True")}, NodePoolStatus{LastReadyGeneration: 1}, now, true)
	if want := "waiting for generation 2: aks (at generation 1)"; st.Message != want {
		t.Fatalf("message %q, want %q", st.Message, want)
	}
	deleting := now
	st = Aggregate(&NodePool{Generation: 2, DeletionTimestamp: &deleting}, []ControllerStatus{report("aks", 2, "Deleted", "False")}, NodePoolStatus{}, now, true)
	if want := "waiting for the pool to be deleted by aks: Deleted says False"; st.Message != want {
		t.Fatalf("message %q, want %q", st.Message, want)
	}
}
