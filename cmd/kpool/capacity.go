package main

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/cloudsim/sim"
)

// newCloudsimCapacity sets or shows the capacity of a running emulator's
// offerings, through its admin route on the loopback listener.
func newCloudsimCapacity() *cobra.Command {
	var (
		in     sim.CapacityEntry
		caFile string
	)
	cmd := &cobra.Command{
		Use:   "capacity ENDPOINT",
		Short: "Exhaust or restore an emulator's capacity for a zone, machine type and spot",
		Long: `capacity limits how many more nodes an emulator starts for one offering: a zone
(the cloud's own name: 2 on AKS, us-west-2b on EKS, us-central1-b on GKE, an
availability domain on OKE, none on Civo), a machine type, spot or on-demand.
--available 0 exhausts it: creates and scale-ups there fail as that cloud fails
when it runs out (nodes it could start come up); --available -1 lifts the limit.
Without --available it lists the limited offerings. ENDPOINT is an emulator's
URL, as a cluster's spec.endpoint holds it; only loopback endpoints are taken.`,
		Example: `  kpool cloudsim capacity https://127.0.0.1:8443 --zone 2 --machine-type Standard_D4s_v5 --available 0
  kpool cloudsim capacity https://127.0.0.1:8443 --zone 2 --machine-type Standard_D4s_v5 --available -1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := loopbackURL(args[0])
			if err != nil {
				return err
			}
			client, err := emulatorClient(caFile)
			if err != nil {
				return err
			}
			req, err := capacityRequest(cmd, u, in)
			if err != nil {
				return err
			}
			res, err := client.Do(req)
			if err != nil {
				return fmt.Errorf("%s: %w", u.Host, err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s: %s", u.Host, res.Status, bytes.TrimSpace(body))
			}
			return printCapacity(cmd.OutOrStdout(), body)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&in.Zone, "zone", "", "the cloud's own zone name (none on a cloud without zones)")
	fs.StringVar(&in.MachineType, "machine-type", "", "the machine type (VM size, instance type, shape, size)")
	fs.BoolVar(&in.Spot, "spot", false, "the spot (preemptible) offering rather than on-demand")
	fs.IntVar(&in.Available, "available", 0, "nodes it can still start (0: exhausted; -1: no limit)")
	fs.StringVar(&caFile, "ca-file", "", "the emulators' CA certificate (default: the one kpool dev writes beside its kubeconfigs)")
	return cmd
}

// capacityRequest is a POST of the entry when --available is given, else a GET.
func capacityRequest(cmd *cobra.Command, u *url.URL, in sim.CapacityEntry) (*http.Request, error) {
	target := u.JoinPath(sim.AdminPrefix, "capacity").String()
	if !cmd.Flags().Changed("available") {
		return http.NewRequestWithContext(cmd.Context(), http.MethodGet, target, nil)
	}
	if in.MachineType == "" {
		return nil, fmt.Errorf("--machine-type: required with --available")
	}
	if in.Available < -1 {
		return nil, fmt.Errorf("--available %d: give 0 or more, or -1 to lift the limit", in.Available)
	}
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, target, bytes.NewReader(b))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

// loopbackURL parses an emulator's endpoint, refusing one off loopback:
// the admin route answers loopback clients only, and kpool sends nothing
// further.
func loopbackURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("ENDPOINT %q: give an emulator's URL, such as https://127.0.0.1:8443", s)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("ENDPOINT %q: an emulator listens on loopback (127.0.0.1, ::1, localhost); this is not", s)
	}
	return u, nil
}

// emulatorClient trusts the emulators' CA: caFile, or the one kpool dev
// wrote beside its kubeconfigs.
func emulatorClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		db := os.Getenv("KPOOL_DATABASE")
		if db == "" {
			db = defaultDatabase()
		}
		caFile = filepath.Join(devKubeconfigDir(db), devCAFile)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w (kpool dev writes it; kpool cloudsim writes its --ca-file)", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", caFile)
	}
	return &http.Client{Transport: sim.Transport(roots)}, nil
}

func printCapacity(out io.Writer, body []byte) error {
	var list struct{ Capacity []sim.CapacityEntry }
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("the emulator's answer: %w", err)
	}
	if len(list.Capacity) == 0 {
		fmt.Fprintln(out, "No offering is limited: every zone and machine type has capacity.")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ZONE\tMACHINE-TYPE\tSPOT\tAVAILABLE")
	for _, e := range list.Capacity {
		zone := e.Zone
		if zone == "" {
			zone = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%d\n", zone, e.MachineType, e.Spot, e.Available)
	}
	return tw.Flush()
}
