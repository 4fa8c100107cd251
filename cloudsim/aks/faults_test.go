package aks_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
)

// snapshot is everything observable about a pool, to compare before and
// after a request.
func (e *env) snapshot(name string) string {
	st, ok := e.sim.Pool(sub, group, cluster, name)
	if !ok {
		return "absent"
	}
	b, err := json.Marshal(st.AgentPool)
	if err != nil {
		e.t.Fatal(err)
	}
	return fmt.Sprintf("%s ready=%d op=%s", b, st.ReadyNodes, st.Operation)
}

// transient reports whether err is what a fault answers: a 500, a 503 or a
// dropped connection.
func transient(err error) bool {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode == http.StatusInternalServerError || re.StatusCode == http.StatusServiceUnavailable
	}
	return err != nil
}

// Over many requests the faulted fraction is near the rate; a faulted
// request changes nothing, an accepted one changes the pool once, and an
// operation that was made to fail ends Failed.
func TestFaults(t *testing.T) {
	const rate = 0.25
	e := newEnv(t, aks.Options{Engine: sim.Options{FaultRate: rate, Seed: 7}})
	rnd := rand.New(rand.NewSource(1))
	accepted := map[string]int{} // accepted writes per pool, as the client saw them
	failedOps := 0

	// write retries a PUT or DELETE until it is accepted, checking that each
	// faulted attempt left the pool as it was.
	write := func(name string, do func() error) {
		t.Helper()
		for attempt := 0; ; attempt++ {
			if attempt > 50 {
				t.Fatalf("%s: not accepted in 50 attempts", name)
			}
			before := e.snapshot(name)
			err := do()
			if err == nil {
				accepted[name]++
				calls := e.sim.Calls()
				last := calls[len(calls)-1]
				e.settle()
				st, exists := e.sim.Pool(sub, group, cluster, name)
				if last.Method == http.MethodDelete && exists != (last.Fault == "fail") {
					t.Fatalf("%s: delete with fault %q, pool exists %v", name, last.Fault, exists)
				}
				if last.Fault == "fail" {
					failedOps++
					if state := ptr.Deref(st.Properties.ProvisioningState, ""); state != "Failed" {
						t.Fatalf("%s: an operation made to fail ended %s", name, state)
					}
				}
				return
			}
			if !transient(err) {
				t.Fatalf("%s: %v is not what a fault answers", name, err)
			}
			if after := e.snapshot(name); after != before {
				t.Fatalf("%s: a faulted request changed the pool:\nbefore %s\nafter  %s", name, before, after)
			}
		}
	}
	// read reads until it gets through.
	read := func(do func() error) {
		t.Helper()
		for attempt := 0; attempt < 50; attempt++ {
			if err := do(); err == nil {
				return
			} else if !transient(err) {
				t.Fatalf("read: %v", err)
			}
		}
		t.Fatal("a read did not get through in 50 attempts")
	}

	names := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	want := map[string]int32{}
	for _, n := range names {
		count := int32(1 + rnd.Intn(4))
		write(n, func() error {
			_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, n, armcontainerservice.AgentPool{Properties: basic(count)},
				&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfNoneMatch: ptr.To("*")})
			if err != nil && strings.Contains(err.Error(), "PreconditionFailed") {
				t.Fatalf("%s: a retried create found the pool created by a faulted attempt", n)
			}
			return err
		})
		want[n] = count
	}
	for round := 0; round < 150; round++ {
		n := names[rnd.Intn(len(names))]
		count := int32(rnd.Intn(6))
		write(n, func() error {
			var pr *armcontainerservice.ManagedClusterAgentPoolProfileProperties
			read(func() error {
				r, err := e.pools.Get(ctx, group, cluster, n, nil)
				pr = r.Properties
				return err
			})
			pr.Count = ptr.To(count)
			_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, n, armcontainerservice.AgentPool{Properties: pr},
				&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: pr.ETag})
			return err
		})
		want[n] = count
		read(func() error {
			pager := e.pools.NewListPager(group, cluster, nil)
			for pager.More() {
				if _, err := pager.NextPage(ctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, n := range names {
		st := e.state(n)
		if ptr.Deref(st.Properties.Count, 0) != want[n] {
			t.Fatalf("%s: count %d, want the last accepted %d", n, ptr.Deref(st.Properties.Count, 0), want[n])
		}
		if ptr.Deref(st.Properties.ProvisioningState, "") == "Succeeded" && st.ReadyNodes != int(want[n]) {
			t.Fatalf("%s: %d ready nodes of %d", n, st.ReadyNodes, want[n])
		}
	}
	for _, n := range names {
		for {
			write(n, func() error {
				_, err := e.pools.BeginDelete(ctx, group, cluster, n, nil)
				return err
			})
			if _, ok := e.sim.Pool(sub, group, cluster, n); !ok {
				break // a delete made to fail leaves the pool: delete again
			}
		}
	}

	// The call log: one create per pool, one logged acceptance per accepted
	// write, and the faulted fraction near the rate.
	calls := e.sim.Calls()
	created := map[string]int{}
	logged := map[string]int{}
	faults := map[string]int{}
	for _, c := range calls {
		name := c.Path[strings.LastIndex(c.Path, "/")+1:]
		if c.Created {
			created[name]++
		}
		if (c.Method == http.MethodPut || c.Method == http.MethodDelete) && c.Status >= 200 && c.Status < 300 && c.Status != http.StatusNoContent {
			logged[name]++
		}
		if c.Fault != "" {
			faults[c.Fault]++
			if (c.Fault == "drop") != (c.Status == 0) {
				t.Fatalf("call %+v", c)
			}
		}
	}
	total := 0
	for _, n := range faults {
		total += n
	}
	for _, n := range names {
		if created[n] != 1 {
			t.Fatalf("%s was created %d times", n, created[n])
		}
		if logged[n] != accepted[n] {
			t.Fatalf("%s: %d accepted writes logged, the client saw %d", n, logged[n], accepted[n])
		}
	}
	frac := float64(total) / float64(len(calls))
	t.Logf("%d calls, %d faulted (%.3f): %v; %d operations failed", len(calls), total, frac, faults, failedOps)
	if len(calls) < 500 || math.Abs(frac-rate) > 0.05 {
		t.Fatalf("%d of %d calls faulted (%.3f), want about %.2f", total, len(calls), frac, rate)
	}
	for _, kind := range []string{"500", "503", "drop", "fail"} {
		if faults[kind] == 0 {
			t.Fatalf("no %s fault in %d calls: %v", kind, len(calls), faults)
		}
	}
	if failedOps != faults["fail"] {
		t.Fatalf("%d failed operations, %d fail faults", failedOps, faults["fail"])
	}
}

// faultedWrite sends a write with every request faulted until one is
// accepted: that one starts an operation that will fail.
func faultedWrite(t *testing.T, e *env, do func() error) {
	t.Helper()
	e.sim.SetFaultRate(1)
	defer e.sim.SetFaultRate(0)
	for i := 0; i < 100; i++ {
		if err := do(); err == nil {
			calls := e.sim.Calls()
			if f := calls[len(calls)-1].Fault; f != "fail" {
				t.Fatalf("accepted with fault %q", f)
			}
			return
		} else if !transient(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("no write accepted in 100 attempts")
}

// An operation made to fail ends Failed, as ARM reports it, and a later PUT
// or DELETE recovers.
func TestFailedOperation(t *testing.T) {
	e := newEnv(t, aks.Options{Engine: sim.Options{Seed: 3}})
	var poller *pollerOf
	faultedWrite(t, e, func() (err error) {
		poller, err = e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(4)}, nil)
		return err
	})
	e.settle()
	_, err := poller.PollUntilDone(ctx, nil) // done at the first poll: no wait
	re := responseError(t, err)
	if re.ErrorCode != "ReconcileVMSSAgentPoolFailed" {
		t.Fatalf("failed create: %v", err)
	}
	st := e.state("workers")
	if ptr.Deref(st.Properties.ProvisioningState, "") != "Failed" || st.ReadyNodes != 2 || st.Operation != "" {
		t.Fatalf("after a failed create: %s, %d ready", ptr.Deref(st.Properties.ProvisioningState, ""), st.ReadyNodes)
	}
	if !strings.HasPrefix(st.ProvisioningError, "ReconcileVMSSAgentPoolFailed: ") || !strings.Contains(st.ProvisioningError, "(AllocationFailed: ") {
		t.Fatalf("provisioning error %q", st.ProvisioningError)
	}
	// From api-version 2025-05-01 the pool itself says why (AgentPoolStatus);
	// 2025-02-01, what armcontainerservice v6 speaks, has no such field.
	for version, want := range map[string]bool{"2025-02-01": false, "2025-05-01": true, "2025-08-02-preview": true} {
		for _, path := range []string{poolPath("workers"), strings.TrimSuffix(poolPath("workers"), "/workers")} {
			resp, body := e.raw(http.MethodGet, path+"?api-version="+version, nil, nil)
			var got struct {
				Properties struct {
					Status *struct {
						ProvisioningError struct{ Code, Message string }
					}
				}
				Value []struct {
					Properties struct {
						Status *struct {
							ProvisioningError struct{ Code, Message string }
						}
					}
				}
			}
			if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: %d %v", version, path, resp.StatusCode, err)
			}
			if len(got.Value) == 1 {
				got.Properties = got.Value[0].Properties
			}
			status := got.Properties.Status
			if (status != nil) != want || want && (status.ProvisioningError.Code != "ReconcileVMSSAgentPoolFailed" || status.ProvisioningError.Message == "") {
				t.Fatalf("%s %s: status %+v, want one: %v", version, path, status, want)
			}
		}
	}
	// ARM keeps the pool; a PUT of it again reconciles.
	p, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(4)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.settle()
	if res, err := p.PollUntilDone(ctx, nil); err != nil || ptr.Deref(res.Properties.ProvisioningState, "") != "Succeeded" {
		t.Fatalf("retried: %v", err)
	}
	if st := e.state("workers"); st.ReadyNodes != 4 || st.ProvisioningError != "" {
		t.Fatalf("ready %d, provisioning error %q after a success", st.ReadyNodes, st.ProvisioningError)
	}

	var del *deletePoller
	faultedWrite(t, e, func() (err error) {
		del, err = e.pools.BeginDelete(ctx, group, cluster, "workers", nil)
		return err
	})
	e.settle()
	_, err = del.PollUntilDone(ctx, nil)
	if re := responseError(t, err); re.ErrorCode != "InternalOperationError" {
		t.Fatalf("failed delete: %v", err)
	}
	if st := e.state("workers"); !strings.HasPrefix(st.ProvisioningError, "InternalOperationError: Deleting") {
		t.Fatalf("provisioning error %q after a failed delete", st.ProvisioningError)
	}
	if st := e.state("workers"); ptr.Deref(st.Properties.ProvisioningState, "") != "Failed" || st.ReadyNodes != 2 {
		t.Fatalf("after a failed delete: %s, %d ready", ptr.Deref(st.Properties.ProvisioningState, ""), st.ReadyNodes)
	}
	del, err = e.pools.BeginDelete(ctx, group, cluster, "workers", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.settle()
	if _, err := del.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.sim.Pool(sub, group, cluster, "workers"); ok {
		t.Fatal("the pool survived the second delete")
	}
}
