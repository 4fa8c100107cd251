package oke_test

import (
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
)

// TestCyclingResizes: an update that cycles and changes the size at once
// ends with the new size of current nodes; shrinking, it never adds
// nodes beyond the pool's nodes when it began; growing, never more
// than the new size and maximumSurge.
func TestCyclingResizes(t *testing.T) {
	for _, tc := range []struct{ from, to, most int }{{3, 1, 3}, {2, 3, 4}} {
		e := newEnv(t, 0)
		id := e.create(t, details("web", tc.from, "Uocm:PHX-AD-1"))
		e.clock.Advance(time.Hour)
		resp, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
			NodeShape: common.String("VM.Standard.E5.Flex"), NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(tc.to)},
			NodePoolCyclingDetails: &ce.NodePoolCyclingDetails{IsNodeCyclingEnabled: common.Bool(true), MaximumSurge: common.String("1")}}})
		if err != nil {
			t.Fatal(err)
		}
		most := 0
		for range 100 {
			e.clock.Advance(5 * time.Second)
			_, all := e.shapes(t, "web")
			most = max(most, all)
			if e.work(t, resp.OpcWorkRequestId).Status != ce.WorkRequestStatusInProgress {
				break
			}
		}
		by, all := e.shapes(t, "web")
		if w := e.work(t, resp.OpcWorkRequestId); w.Status != ce.WorkRequestStatusSucceeded || by["VM.Standard.E5.Flex"] != tc.to || all != tc.to || most > tc.most {
			t.Fatalf("%d to %d: work %s, nodes %v, at most %d", tc.from, tc.to, w.Status, by, most)
		}
	}
}
