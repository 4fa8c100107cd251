package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
)

// browser starts headless Chromium (cmd/kpool's browser test finds it the
// same way; KPOOL_NO_BROWSER=1 leaves the test out) and returns its
// context.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("KPOOL_NO_BROWSER") == "1" {
			t.Skip("KPOOL_NO_BROWSER=1: the dashboard's browser tests are left out")
		}
		t.Fatal("no Chromium: install it (apt-get install chromium) or set KPOOL_NO_BROWSER=1 to leave this test out")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}

// TestEditSendsOnlyChanges (in Chromium): on a pool made without
// autoscaling (as the CLI makes one), changing only the node count in the
// pool page's form plans and writes spec.nodeCount alone, though the form
// shows autoscaling (off); each later change, compared with what was
// applied before it, is planned and audited alone.
func TestEditSendsOnlyChanges(t *testing.T) {
	s := newSite(t, Options{}, func(svc *service.Service, access *auth.Access, dash http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/api/", api.NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))))
		mux.Handle("/", dash)
		return mux
	})
	_, secret := s.token(t, owner)
	ctx := storetest.Ctx(owner)
	svc := s.h.o.Service
	c, err := svc.CreateCluster(ctx, service.ClusterCreate{Name: "aks", Spec: json.RawMessage(
		`{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.CreateNodePool(ctx, service.NodePoolCreate{Name: "web", ClusterID: c.ID,
		Spec: json.RawMessage(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":2,"labels":{"team":"web","tier":"front"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	b := browser(t)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// planned reads the plan's fields, in order.
	planned := func() string {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[string](`[...document.querySelectorAll("#plan-table tbody tr td:first-child")].map(e => e.textContent).join(", ")`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	run("sign in", chromedp.Navigate(s.srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), secret), chromedp.Click(chromedp.CSS("#signin")), chromedp.WaitVisible(chromedp.CSS(`[data-live="fleet"]`)))
	run("open the pool", chromedp.Navigate(s.srv.URL+"/nodepools/"+p.ID), chromedp.WaitVisible(chromedp.CSS("#edit-count")))
	js := func(code string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](code)(ctx, tg)
			return err
		})
	}
	for _, tc := range []struct {
		name, set, want string // set changes the form (f) in the page
		auto            string // the pool's autoscaling after it
	}{
		{"the count alone", `f.nodeCount.value = "4"`, "spec.nodeCount", "null"},
		{"then a label alone", `f.labels.value = "team=web\nzone=eu"`, "spec.labels", "null"},
		{"autoscaling on", `f.autoscaling.checked = true; f.minNodes.value = "1"; f.maxNodes.value = "5"`, "spec.autoscaling",
			`{"enabled":true,"minNodes":1,"maxNodes":5}`},
		{"its max alone", `f.maxNodes.value = "6"`, "spec.autoscaling", `{"enabled":true,"minNodes":1,"maxNodes":6}`},
		{"autoscaling off: its bounds go too", `f.autoscaling.checked = false`, "spec.autoscaling", `{"enabled":false}`},
	} {
		run(tc.name+": plan", js(`{ const f = document.getElementById("edit-form").elements; `+tc.set+` }`),
			chromedp.Click(chromedp.CSS("#review")), chromedp.WaitVisible(chromedp.CSS("#plan-table")))
		if got := planned(); got != tc.want {
			t.Fatalf("%s: the plan changes %q, want %q alone", tc.name, got, tc.want)
		}
		run(tc.name+": apply", chromedp.Click(chromedp.CSS("#apply")), chromedp.WaitVisible(chromedp.CSS("#applied")))
		evs, err := svc.Events(ctx, audit.Query{NodePoolID: p.ID, Type: kpool.EventNodePoolUpdated, Limit: 1})
		if err != nil || len(evs.Items) != 1 || evs.Items[0].Detail != tc.want {
			t.Fatalf("%s: the audit event: %+v, %v", tc.name, evs, err)
		}
		if np, err := svc.NodePool(ctx, p.ID); err != nil || jsonOf(np.Spec.Autoscaling) != tc.auto {
			t.Fatalf("%s: autoscaling %s, want %s (%v)", tc.name, jsonOf(np.Spec.Autoscaling), tc.auto, err)
		}
		// The form's next change is compared with what was applied; the
		// next plan and answer are waited for afresh.
		run(tc.name+": clear the answers", js(`document.getElementById("plan").replaceChildren(); document.getElementById("result").replaceChildren()`))
	}
	after, err := svc.NodePool(ctx, p.ID)
	if err != nil || after.Spec.Count() != 4 || after.Spec.Autoscaling.On() || jsonOf(after.Spec.Autoscaling) != `{"enabled":false}` || after.Spec.Labels["zone"] != "eu" || after.Spec.Labels["tier"] != "" {
		t.Fatalf("the pool after the edits: %+v, %v", after, err)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
