// Package storetest is the conformance suite every kpool.Store must pass.
// Each store's tests call Run with a function that opens an empty store.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
)

// Platforms are every platform kpool knows, as the services of the suite
// check pools against them (as kpool serve does).
var Platforms = catalog.Registry()

// Opener returns a new, empty, migrated store; the store is closed by the
// test's cleanup.
type Opener func(t testing.TB) kpool.Store

// Users of the suite.
const (
	Alice      = "alice@example.com"
	Bob        = "bob@example.com"
	Admin      = "admin@example.com"
	Controller = "gcp-controller@example.com"
)

// Ctx returns a context carrying the identity of email.
func Ctx(email string) context.Context {
	id := &kpool.Identity{Email: email, Admin: email == Admin, Controller: email == Controller}
	return kpool.WithIdentity(context.Background(), id)
}

// GCPCluster is a valid GKE cluster spec.
const GCPCluster = `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}}}`

// GCPPool is a valid pool spec for GCPCluster.
const GCPPool = `{"platform":{"type":"gcp","gcp":{"machineType":"n1-standard-4","diskSize":100,"zones":["us-central1-a"]}},"nodeCount":3}`

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, *service.Service)
	}{
		{"ClusterLifecycle", testClusterLifecycle},
		{"UniqueNames", testUniqueNames},
		{"ClientChosenID", testClientChosenID},
		{"GenerationAndResourceVersion", testGeneration},
		{"StaleResourceVersion", testStaleResourceVersion},
		{"ConcurrentSameResourceVersion", testConcurrentSameRV},
		{"ConcurrentWithoutResourceVersion", testConcurrentNoRV},
		{"RollbackLeavesNothing", testRollback},
		{"EventsCommitWithWrites", testEvents},
		{"AuditTrail", testAuditTrail},
		{"EventNames", testEventNames},
		{"ListOrderPagingFilters", testList},
		{"ClusterIDs", testClusterIDs},
		{"IndexPages", testIndexPages},
		{"OffsetCap", testOffsetCap},
		{"LabelSelector", testLabelSelector},
		{"LogicalLabelSelector", testLogicalLabelSelector},
		{"Visibility", testVisibility},
		{"StatusReports", testStatusReports},
		{"ClusterStatus", testClusterStatus},
		{"ClusterFacts", testClusterFacts},
		{"CloudClusterOnce", testCloudClusterOnce},
		{"ObservedPoolsRefuseWrites", testObservedPoolsRefuseWrites},
		{"ReportsScrubbed", testReportsScrubbed},
		{"TwoPhaseDelete", testTwoPhaseDelete},
		{"ClusterForceDelete", testClusterForceDelete},
		{"TimesRoundTrip", testTimes},
		{"Leases", testLeases},
		{"LeaseList", testLeaseList},
		{"SubscribeWakesOnCommit", testSubscribe},
		{"Totals", testTotals},
		{"CreateRacesClusterDelete", testCreateRacesClusterDelete},
		{"ProviderNamesUnique", testProviderNamesUnique},
		{"CreateSeesClusterChanges", testCreateSeesClusterChanges},
		{"UpdateBatchOutcomes", testUpdateBatchOutcomes},
		{"DryRunMeetsConflicts", testDryRunMeetsConflicts},
		{"FeedSeesEveryEvent", testFeedSeesEveryEvent},
		{"ConcurrentCreates", testConcurrentCreates},
		{"EventRetention", testEventRetention},
		{"Tokens", testTokens},
		{"LogicalPools", testLogicalPools},
		{"LogicalLayout", testLogicalLayout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, service.New(open(t), Platforms))
		})
	}
}

// ok returns v, or fails the test that it is applied to when err is set:
// ok(s.Cluster(ctx, id))(t).
func ok[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := kpool.ErrorCode(err); got != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

// NewCluster registers a GCP cluster for owner: a cloud cluster of the
// owner's and the name's own, as a cloud cluster is registered once.
func NewCluster(t testing.TB, s *service.Service, owner, name string) *kpool.Cluster {
	t.Helper()
	return ok(s.CreateCluster(Ctx(owner), service.ClusterCreate{Name: name, Spec: ClusterSpec(owner, name)}))(t)
}

// ClusterSpec is GCPCluster for a cloud cluster of owner's and name's own.
func ClusterSpec(owner, name string) json.RawMessage {
	unique := fmt.Sprintf(`"clusterName":"c%08x"`, crc32.ChecksumIEEE([]byte(owner+" "+name)))
	return json.RawMessage(strings.Replace(GCPCluster, `"clusterName":"prod"`, unique, 1))
}

// NewPool creates a GCP pool in cluster c as c's owner.
func NewPool(t testing.TB, s *service.Service, c *kpool.Cluster, name string) *kpool.NodePool {
	t.Helper()
	return ok(s.CreateNodePool(Ctx(c.CreatedBy), service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}))(t)
}

func count(n int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"nodeCount":%d}`, n)) }

// parallel runs fn(0..n-1) at once and returns their errors.
func parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func ready(controller string, gen int64) kpool.ControllerStatus {
	return kpool.ControllerStatus{ControllerName: controller, ObservedGeneration: gen, Conditions: []kpool.Condition{
		{Type: kpool.ConditionReady, Status: kpool.ConditionTrue, Reason: "NodesReady", Message: "all nodes ready"}}}
}
