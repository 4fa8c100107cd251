package oke

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DemoStateDir is where "kpool cloudsim" writes the demo tenancy's OCI
// config file and key file: kpool-cloudsim/oke under the temporary
// directory ($TMPDIR).
func DemoStateDir() string { return filepath.Join(os.TempDir(), "kpool-cloudsim", "oke") }

// DemoConfig is the demo tenancy's OCI config file (one DEFAULT profile),
// its key_file keyFile, as Oracle's CLI and SDKs read ~/.oci/config.
func DemoConfig(keyFile string) string {
	return fmt.Sprintf("[DEFAULT]\ntenancy=%s\nuser=%s\nfingerprint=%s\nkey_file=%s\nregion=%s\n",
		DemoTenancy, DemoUser, DemoFingerprint(), keyFile, DemoRegion)
}

// WriteDemoConfig writes the demo key's PEM (demo-key.pem) and the OCI
// config file naming it (config) to dir, each readable by its owner only
// (Oracle's CLI warns about a key file others can read), and returns
// their paths. A file is written whole or not at all.
func WriteDemoConfig(dir string) (configFile, keyFile string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	keyFile, configFile = filepath.Join(dir, "demo-key.pem"), filepath.Join(dir, "config")
	for path, text := range map[string]string{keyFile: DemoPrivateKeyPEM, configFile: DemoConfig(keyFile)} {
		if err := writeWhole(path, text); err != nil {
			return "", "", err
		}
	}
	return configFile, keyFile, nil
}

// writeWhole writes a file through a temporary one renamed over it, so
// that two processes writing the same file never leave half of it.
func writeWhole(path, text string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// describeClients writes the demo tenancy's config and key files to
// DemoStateDir and says how Oracle's CLI and JavaScript SDK use them
// against the emulator at endpoint; the key's PEM is never printed. When
// the files cannot be written, it says where the key is in kpool's source.
func describeClients(w io.Writer, endpoint string) {
	fmt.Fprintf(w, "  demo key:  tenancy %s, user %s, fingerprint %s, region %s\n", DemoTenancy, DemoUser, DemoFingerprint(), DemoRegion)
	config, key, err := WriteDemoConfig(DemoStateDir())
	if err != nil {
		fmt.Fprintf(w, "  OCI config: not written (%v): its key is oke.DemoPrivateKeyPEM in kpool's cloudsim/oke/demokey.go; the profile:\n", err)
		config, key = "<config file>", "<key file>"
	} else {
		fmt.Fprintf(w, "  OCI config: %s (profile DEFAULT, the demo key in %s):\n", config, key)
	}
	fmt.Fprintf(w, "    [DEFAULT] tenancy=%s user=%s fingerprint=%s key_file=%s region=%s\n", DemoTenancy, DemoUser, DemoFingerprint(), key, DemoRegion)
	fmt.Fprintf(w, "  oci CLI:   oci --config-file %s --endpoint %s --cert-bundle <CA file> ce node-pool list --compartment-id %s --cluster-id %s\n",
		config, endpoint, DemoCompartment, DemoClusterID)
	fmt.Fprintf(w, "  Node.js:   new ContainerEngineClient({authenticationDetailsProvider: new ConfigFileAuthenticationDetailsProvider(%q)}), "+
		"then client.endpoint = %q, with NODE_EXTRA_CA_CERTS=<CA file>\n", config, endpoint)
}
