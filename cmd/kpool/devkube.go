package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kpool/kpool/cloudsim"
)

// devKubeconfigDir is where kpool dev writes its emulated clusters'
// kubeconfigs: a folder kubeconfigs in its data folder (devFolder).
func devKubeconfigDir(database string) string {
	return filepath.Join(devFolder(database), "kubeconfigs")
}

// writeDevKubeconfigs writes the emulated clusters' kubeconfigs, which
// kpool dev's banner names (describeDevKubeconfigs).
func writeDevKubeconfigs(emu *cloudsim.Running, database string) error {
	dir := devKubeconfigDir(database)
	if _, err := emu.WriteKubeconfigs(dir); err != nil {
		return fmt.Errorf("kpool dev: %w", err)
	}
	// The emulators' CA, for kpool cloudsim capacity (a certificate: no secret).
	if err := os.WriteFile(filepath.Join(dir, devCAFile), emu.CA.PEM, 0o644); err != nil {
		return fmt.Errorf("kpool dev: writing the emulators' CA: %w", err)
	}
	return nil
}

// devCAFile is the emulators' CA certificate kpool dev writes beside the
// kubeconfigs.
const devCAFile = "cloudsim-ca.pem"

// describeDevKubeconfigs prints the kubectl line of each emulated
// cluster's Kubernetes API.
func describeDevKubeconfigs(out io.Writer, emu *cloudsim.Running) {
	if len(emu.KubeconfigFiles) > 0 {
		fmt.Fprintln(out)
		cloudsim.DescribeKubeconfigs(out, emu.KubeconfigFiles, "")
		for _, p := range emu.KubeconfigFiles {
			// Any file will do: the CA sits beside every kubeconfig.
			fmt.Fprintf(out, "Run an emulator's zone out of capacity: kpool cloudsim capacity ENDPOINT --zone Z --machine-type M --available 0 --ca-file %s\n",
				filepath.Join(filepath.Dir(p), devCAFile))
			break
		}
	}
}
