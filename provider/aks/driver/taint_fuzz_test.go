package driver

import (
	"testing"

	"github.com/kpool/kpool"
)

// FuzzParseTaint: a taint string from AKS never panics parseTaint, and a
// taint it parses prints back to a string that parses to the same taint.
func FuzzParseTaint(f *testing.F) {
	for _, s := range []string{"workload-type=gpu:NoSchedule", "dedicated:NoExecute", "a=b=c:d:e", "=:", ":", "", "noeffect", "a=:NoSchedule",
		"kubernetes.azure.com/scalesetpriority=spot:NoSchedule"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tn, ok := parseTaint(s)
		if !ok {
			if tn != (kpool.Taint{}) {
				t.Fatalf("parseTaint(%q) refused but returned %+v", s, tn)
			}
			return
		}
		again, ok := parseTaint(taintString(tn))
		if !ok || again != tn {
			t.Fatalf("parseTaint(%q) = %+v, printed %q, parsed again %+v (%v)", s, tn, taintString(tn), again, ok)
		}
	})
}
