package provider_test

import (
	"encoding/json"
	"strings"
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
		for _, f := range cli.PoolFlags {
			v, given := b[f.Field]
			if !strings.Contains(" "+cli.ExampleFlags+" ", " --"+f.Name+" ") {
				continue
			}
			if _, number := v.(float64); !given || number != (f.Kind == "number") {
				t.Errorf("%s: --%s in %q gave %s %v (%T)", p.Type(), f.Name, cli.ExampleFlags, f.Field, v, v)
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
