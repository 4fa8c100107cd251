package api

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestOffsetCap checks that every list pages by offset up to kpool.MaxOffset
// and refuses a deeper offset with a 400 on the offset field that says how
// to page deeper (the next cursor, after=), rather than reading and
// skipping that many rows.
func TestOffsetCap(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "prod", gcpCluster)
		a.pool(user, c.ID, "workers")
		for _, path := range []string{"/api/v1/nodepools", "/api/v1/clusters/" + c.ID + "/nodepools", "/api/v1/clusters", "/api/v1/clusters/" + c.ID + "/logicalpools"} {
			r := a.as(user, "GET", path+"?offset="+strconv.Itoa(kpool.MaxOffset), "")
			want(t, r, http.StatusOK)
			var l struct {
				Offset int `json:"offset"`
			}
			r.json(t, &l)
			if l.Offset != kpool.MaxOffset {
				t.Fatalf("%s at the cap: %s", path, r.body)
			}
			e := wantError(t, a.as(user, "GET", path+"?offset="+strconv.Itoa(kpool.MaxOffset+1), ""), http.StatusBadRequest, kpool.CodeValidation, "")
			if len(e.Fields) != 1 || e.Fields[0].Field != "offset" || !strings.Contains(e.Fields[0].Reason, "after=<next>") ||
				!strings.Contains(e.Fields[0].Reason, strconv.Itoa(kpool.MaxOffset)) {
				t.Fatalf("%s beyond the cap: %+v", path, e)
			}
		}
	})
}
