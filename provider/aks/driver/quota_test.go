package driver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestQuota: AKS's vCPU quota and its limit of agent pools per cluster
// answer 400, which alone says "invalid spec"; the driver says quota
// (KindQuota: tried again slowly, once the quota is raised), not
// validation. The error carries ARM's code and request id.
func TestQuota(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits aksim.Limits
		nodes  int
		code   string
	}{
		{"vCPUs of the family", aksim.Limits{FamilyVCPUs: 8}, 3, "ErrCode_InsufficientVCPUQuota"},
		{"agent pools per cluster", aksim.Limits{Pools: 1}, 1, "OperationNotAllowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setup
			s.Emulator = func(o sim.Options) *aksim.Server {
				emu := aksim.New(aksim.Options{Engine: o, Token: "kpool-cloudsim", Limits: tc.limits})
				emu.AddCluster(subscription, group, clusterName, "westeurope", "1.30.4")
				return emu
			}
			e := s.Start(t)
			ctx := context.Background()
			spec := func(name string) provider.PoolSpec {
				return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{NodeCount: ptr.To(tc.nodes),
					Platform: kpool.NodePoolPlatform{Azure: &kpool.AzureNodePool{VMSize: "Standard_D4s_v5"}}})
			}
			if tc.limits.Pools > 0 {
				if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, spec("first")); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, spec("over"))
			if !provider.IsQuota(err) {
				t.Fatalf("got %v, want a quota error", err)
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.ErrorCode != tc.code {
				t.Fatalf("the emulator answered %v, want %s", err, tc.code)
			}
			// The controllers' log names ARM's code and request id, to find
			// the call in Azure's own logs.
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Code != tc.code || pe.RequestID == "" || pe.RequestID != re.RawResponse.Header.Get("x-ms-request-id") {
				t.Errorf("provider error %+v: want code %s and ARM's request id", pe, tc.code)
			}
		})
	}
}
