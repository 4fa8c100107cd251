package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kpool/kpool/cloudsim"
)

// devKubeconfigDir is where kpool dev writes its emulated clusters'
// kubeconfigs: a folder kubeconfigs beside its SQLite database (by
// default in kpool's data folder), or in kpool's data folder with
// another database.
func devKubeconfigDir(database string) string {
	if path, ok := strings.CutPrefix(database, "sqlite:"); ok && path != "" {
		return filepath.Join(filepath.Dir(path), "kubeconfigs")
	}
	return filepath.Join(dataDir(), "kpool", "kubeconfigs")
}

// writeDevKubeconfigs writes the emulated clusters' kubeconfigs, which
// kpool dev's banner names (describeDevKubeconfigs).
func writeDevKubeconfigs(emu *cloudsim.Running, database string) error {
	if _, err := emu.WriteKubeconfigs(devKubeconfigDir(database)); err != nil {
		return fmt.Errorf("kpool dev: %w", err)
	}
	return nil
}

// describeDevKubeconfigs prints the kubectl line of each emulated
// cluster's Kubernetes API.
func describeDevKubeconfigs(out io.Writer, emu *cloudsim.Running) {
	if len(emu.KubeconfigFiles) > 0 {
		fmt.Fprintln(out)
		cloudsim.DescribeKubeconfigs(out, emu.KubeconfigFiles, "")
	}
}
