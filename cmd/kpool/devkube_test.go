package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/sim"
)

// TestDevKubeconfigs: kpool dev writes each emulated cluster's kubeconfig
// beside its database (0600) and prints a kubectl line for it; client-go
// built from each file reaches that cluster's emulated Kubernetes API.
func TestDevKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	printed := startDev(t, sim.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), func(f *serveFlags) {
		f.database = "sqlite:" + filepath.Join(dir, "dev.db")
	})
	lines := regexp.MustCompile(`(?m)^  (\S+): kubectl --kubeconfig (\S+) get nodes$`).FindAllStringSubmatch(printed, -1)
	if len(lines) == 0 {
		t.Fatalf("no kubectl line in kpool dev's banner:\n%s", printed)
	}
	for _, l := range lines {
		name, path := l[1], l[2]
		if want := filepath.Join(dir, "kubeconfigs", "kubeconfig-"+name+".yaml"); path != want {
			t.Fatalf("%s's kubeconfig at %s, want %s", name, path, want)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", path, st, err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s's Kubernetes API: %v", name, err)
		}
		t.Logf("%s: %d nodes", name, len(nodes.Items))
	}
}

// TestCloudsimKubeconfigDir: kpool cloudsim --kubeconfig-dir writes the
// emulated clusters' kubeconfigs there, 0600.
func TestCloudsimKubeconfigDir(t *testing.T) {
	dir := t.TempDir()
	startCloudsim(t, "--kubeconfig-dir", dir)
	files, err := filepath.Glob(filepath.Join(dir, "kubeconfig-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no kubeconfig in --kubeconfig-dir: %v", err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", f, st, err)
		}
	}
}
