package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
)

// TestExampleBlock: every platform's example pool block names its machine
// type, carries its example flags as their fields (a number as a number),
// and reads as a pool spec.
func TestExampleBlock(t *testing.T) {
	for _, p := range catalog.Profiles() {
		if !p.Capabilities().NodePools {
			continue
		}
		cli := p.CLI()
		b := cli.ExampleBlock()
		if b[cli.PoolFields.MachineType] != cli.MachineExample {
			t.Errorf("%s: %v lacks the machine type %s", p.Type(), b, cli.MachineExample)
		}
		if p.Type() == kpool.PlatformOCI {
			if _, ok := b["ocpus"].(float64); !ok {
				t.Errorf("oci: %v: --ocpus is not a number", b)
			}
		}
		raw, _ := json.Marshal(map[string]any{"platform": map[string]any{string(p.Type()): b}, "nodeCount": 1})
		var spec kpool.NodePoolSpec
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatalf("%s: %v", p.Type(), err)
		}
		t.Logf("%s: %s", p.Type(), raw)
	}
}
