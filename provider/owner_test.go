package provider_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

const (
	inst  = "0123456789abcdef0123456789abcdef"
	other = "fedcba9876543210fedcba9876543210"
	pool  = "01950000-0000-7000-8000-000000000001"
)

// TestMarkKeys: a mark goes into tags or labels and comes back out of
// them, leaving the user's own untouched.
func TestMarkKeys(t *testing.T) {
	for _, keys := range []provider.MarkKeys{provider.TagKeys, provider.LabelKeys} {
		for _, tc := range []struct {
			name string
			user map[string]string
			mark provider.Owner
		}{
			{"nil map, no mark", nil, provider.Owner{}},
			{"user tags and a mark", map[string]string{"team": "web"}, provider.Owner{Installation: inst, Pool: pool}},
			{"a mark without a pool", map[string]string{"team": "web"}, provider.Owner{Installation: inst}},
		} {
			t.Run(keys.Installation+"/"+tc.name, func(t *testing.T) {
				put := keys.Put(tc.user, tc.mark)
				rest, got := keys.Take(put)
				if got != tc.mark || !maps.Equal(rest, tc.user) && len(rest)+len(tc.user) > 0 {
					t.Fatalf("Put then Take: mark %+v, rest %v; want %+v, %v", got, rest, tc.mark, tc.user)
				}
				if _, ok := tc.user[keys.Installation]; ok {
					t.Fatal("Put wrote into its argument")
				}
			})
		}
	}
}

// TestRemark: an update marks an unmarked pool and keeps its own mark,
// and never writes over another owner's.
func TestRemark(t *testing.T) {
	mine := provider.Owner{Installation: inst, Pool: pool}
	for _, tc := range []struct {
		name       string
		have, want provider.Owner
		out        provider.Owner
		foreign    bool
	}{
		{"unmarked pool", provider.Owner{}, mine, mine, false},
		{"its own mark", mine, mine, mine, false},
		{"a caller without a mark", mine, provider.Owner{}, provider.Owner{}, true},
		{"another installation", provider.Owner{Installation: other, Pool: pool}, mine, provider.Owner{}, true},
		{"another pool", provider.Owner{Installation: inst, Pool: "01950000-0000-7000-8000-0000000000ff"}, mine, provider.Owner{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := provider.Remark(kpool.PlatformAzure, "web", tc.have, tc.want)
			if out != tc.out || provider.IsForeign(err) != tc.foreign {
				t.Fatalf("Remark = %+v, %v", out, err)
			}
			if tc.foreign && (provider.Retryable(err) || !strings.Contains(err.Error(), tc.have.Installation)) {
				t.Fatalf("the refusal is retryable or does not name the owner: %v", err)
			}
			got := &provider.Pool{PoolSpec: provider.PoolSpec{Owner: tc.have}}
			if f := provider.Foreign(got, tc.want); f != tc.foreign {
				t.Fatalf("Foreign = %v", f)
			}
		})
	}
}

// TestMarkTagsReserved: a pool's tags may not use the mark's keys, in any
// case, on any platform with pools.
func TestMarkTagsReserved(t *testing.T) {
	reg := catalog.Registry()
	c := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure,
		Azure: &kpool.AzureCluster{SubscriptionID: "0b1f6471-1bf0-4dda-aec3-111122223333", ResourceGroup: "rg", ClusterName: "aks", Location: "westeurope"}}}}
	for _, tc := range []struct {
		tags  string
		field string // "" when valid
	}{
		{`{"team":"web"}`, ""},
		{`{"kpool-pool":"x"}`, "spec.tags.kpool-pool"},
		{`{"KPOOL-Installation":"x"}`, "spec.tags.KPOOL-Installation"},
	} {
		t.Run(tc.tags, func(t *testing.T) {
			var s kpool.NodePoolSpec
			if err := json.Unmarshal([]byte(`{"nodeCount":1,"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"tags":`+tc.tags+`}`), &s); err != nil {
				t.Fatal(err)
			}
			kpool.DefaultNodePoolSpec(&s, c, "westeurope")
			err := kpool.ValidateNodePool(reg, &kpool.NodePool{ID: pool, Name: "web", Spec: s}, c)
			var e *kpool.Error
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && (!asKpool(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != tc.field || !strings.Contains(e.Fields[0].Reason, "reserved")):
				t.Fatalf("got %v, want a validation error on %s", err, tc.field)
			}
		})
	}
}

func asKpool(err error, e **kpool.Error) bool {
	k, ok := err.(*kpool.Error)
	*e = k
	return ok
}
