package cloudsim

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// kubeconfigser is what an emulator whose clusters serve an emulated
// Kubernetes API (cloudsim/kube) has: each demo cluster's kubeconfig, by
// cluster name, when the emulator is served at endpoint.
type kubeconfigser interface {
	Kubeconfigs(endpoint string) map[string]string
}

// Kubeconfigs returns the kubeconfig of every emulated cluster whose
// emulator has them, by cluster name. They hold the clusters' tokens:
// never print them.
func (r *Running) Kubeconfigs() map[string]string {
	out := map[string]string{}
	for _, s := range r.Emulators {
		if k, ok := s.Emulator.(kubeconfigser); ok {
			maps.Copy(out, k.Kubeconfigs(s.URL))
		}
	}
	return out
}

// WriteKubeconfigs writes each emulated cluster's kubeconfig to
// dir/kubeconfig-<cluster>.yaml, readable by its owner only (it holds the
// cluster's token), and returns the files' paths by cluster name (also
// kept in r.KubeconfigFiles).
func (r *Running) WriteKubeconfigs(dir string) (map[string]string, error) {
	cfgs := r.Kubeconfigs()
	if len(cfgs) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cloudsim: kubeconfig folder: %w", err)
	}
	paths := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(cfgs)) {
		if !fileSafe(name) {
			return nil, fmt.Errorf("cloudsim: cluster name %q cannot name a file", name)
		}
		p := filepath.Join(dir, "kubeconfig-"+name+".yaml")
		// WriteFile keeps an existing file's mode: make sure it is 0600.
		if err := errors.Join(os.WriteFile(p, []byte(cfgs[name]), 0o600), os.Chmod(p, 0o600)); err != nil {
			return nil, fmt.Errorf("cloudsim: writing %s's kubeconfig: %w", name, err)
		}
		paths[name] = p
	}
	r.KubeconfigFiles = paths
	return paths, nil
}

// fileSafe: a cluster name made of letters, digits, '.', '_' and '-', not
// starting with '.', which is a file name as it is.
func fileSafe(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && strings.Trim(name,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// kubeconfigDir is where Run writes the kubeconfigs: dir when given, else
// the CA file's folder; "" when neither is given.
func kubeconfigDir(dir, caFile string) string {
	if dir != "" || caFile == "" {
		return dir
	}
	return filepath.Dir(caFile)
}

// DescribeKubeconfigs writes, for people, the kubeconfig files of the
// emulated clusters and the kubectl line that reaches each; note says why
// there are none when paths is empty ("" prints nothing then).
func DescribeKubeconfigs(out io.Writer, paths map[string]string, note string) {
	if len(paths) == 0 {
		if note != "" {
			fmt.Fprintf(out, "Kubernetes APIs of the emulated clusters: %s\n", note)
		}
		return
	}
	fmt.Fprintf(out, "Kubernetes APIs of the emulated clusters (kubeconfig files, readable by you only):\n")
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		fmt.Fprintf(out, "  %s: kubectl --kubeconfig %s get nodes\n", name, paths[name])
	}
}
