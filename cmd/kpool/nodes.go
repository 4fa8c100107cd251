package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// Kubernetes nodes as kpool sees them (kpool nodepool nodes, kpool cluster
// nodes), and kubectl through kpool's read-only proxy (kpool cluster
// kubeconfig, kpool config kube-credential).

func newPoolNodes(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "nodes ID",
		Short: "List a node pool's Kubernetes nodes, as kubectl get nodes does",
		Long: `The pool's nodes as its cluster's Kubernetes API says them: the nodes whose
cloud pool label names the pool. STATUS is Ready or NotReady, with
",SchedulingDisabled" for a cordoned node; -o wide adds the kubelet version,
the instance type and the placement labels (kompox.dev/node-pool, kompox.dev/node-zone, and nodepool
when the cluster asks for the guide's) a node misses.`,
		Example: `  kpool nodepool nodes web --cluster prod
  kpool nodepool nodes web --cluster prod -o wide
  kpool nodepool nodes web -o json`,
		Args: idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := f.client()
			p, err := c.NodePool(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			ns, err := c.PoolNodes(cmd.Context(), p.ClusterID, p.ID)
			if err != nil {
				return err
			}
			return f.printNodes(cmd, ns, nil)
		},
	}
}

func newClusterNodes(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "nodes ID",
		Short: "List a cluster's Kubernetes nodes, with the pool of each",
		Example: `  kpool cluster nodes prod
  kpool cluster nodes prod -o wide`,
		Args: idArg("cluster"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := f.client().ClusterNodes(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return f.printNodes(cmd, ns, kpoolNames(cmd, f.client(), args[0]))
		},
	}
}

// kpoolNames maps the provider names of the cluster's pools to their
// names in kpool, for the POOL column (empty when they cannot be listed:
// the provider's names are shown).
func kpoolNames(cmd *cobra.Command, c *api.Client, cluster string) map[string]string {
	names := map[string]string{}
	_ = pages(true, service.ListOptions{ClusterID: cluster, Limit: kpool.MaxLimit}, func(o service.ListOptions) (string, error) {
		page, err := c.NodePools(cmd.Context(), o)
		if err != nil {
			return "", err
		}
		for _, p := range page.NodePools {
			if p.ProviderName != "" {
				names[p.ProviderName] = p.Name
			}
		}
		return page.Next, nil
	})
	return names
}

// printNodes prints nodes as a table (with pools: a POOL column, each
// pool by its kpool name when it has one), or the API's {"items": [...]}.
func (f *clientFlags) printNodes(cmd *cobra.Command, ns []kpool.Node, pools map[string]string) error {
	if ns == nil {
		ns = []kpool.Node{}
	}
	if f.table() && len(ns) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "No nodes found.")
		return nil
	}
	l := &api.NodeList{Items: ns}
	return f.print(cmd, l, func(w io.Writer) { nodeTable(w, l.Items, pools, f.wide(), f.clock.Now()) })
}

// nodeTable is kubectl get nodes' table, with the node's zone: NAME
// [POOL] STATUS ZONE AGE, which fits 80 columns with the clouds' long node
// names; wide adds VERSION INSTANCE-TYPE MISSING-LABELS.
func nodeTable(w io.Writer, ns []kpool.Node, pools map[string]string, wide bool, now time.Time) {
	withPool := pools != nil
	head := "NAME\tSTATUS\tZONE\tAGE"
	if withPool {
		head = "NAME\tPOOL\tSTATUS\tZONE\tAGE"
	}
	if wide {
		head += "\tVERSION\tINSTANCE-TYPE\tMISSING-LABELS"
	}
	fmt.Fprintln(w, head)
	for _, n := range ns {
		fmt.Fprint(w, n.Name)
		if withPool {
			fmt.Fprint(w, "\t"+orDash(nameOr(pools[n.Pool], n.Pool)))
		}
		zone := n.Zone
		if zone == "" {
			zone = n.NativeZone
		}
		fmt.Fprintf(w, "\t%s\t%s\t%s", nodeStatus(n), orDash(zone), age(n.CreatedAt, now))
		if wide {
			fmt.Fprintf(w, "\t%s\t%s\t%s", orDash(n.Version), orDash(n.InstanceType), orDash(strings.Join(n.MissingLabels, ",")))
		}
		fmt.Fprintln(w)
	}
}

// nodeStatus is kubectl's STATUS: Ready or NotReady, and
// SchedulingDisabled for a cordoned node.
func nodeStatus(n kpool.Node) string {
	s := "NotReady"
	if n.Ready {
		s = "Ready"
	}
	if n.Cordoned {
		s += ",SchedulingDisabled"
	}
	return s
}

// kubeNodes is the pool view's line of what Kubernetes says of the pool's
// nodes beside what the cloud says (cloud < 0: it has not said).
func kubeNodes(k *kpool.NodeCounts, cloud int) string {
	s := fmt.Sprintf("%d/%d Ready in Kubernetes", k.Ready, k.Total)
	if cloud >= 0 {
		s += fmt.Sprintf(", at the cloud %d", cloud)
	}
	var more []string
	if k.Cordoned > 0 {
		more = append(more, fmt.Sprintf("%d cordoned", k.Cordoned))
	}
	if k.Unlabelled > 0 {
		more = append(more, fmt.Sprintf("%d missing placement labels", k.Unlabelled))
	}
	if len(more) > 0 {
		s += " (" + strings.Join(more, ", ") + ")"
	}
	return s
}

func newClusterKubeconfig(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig ID",
		Short: "Print a kubeconfig for kubectl through kpool's read-only proxy to the cluster",
		Long: `Prints a kubeconfig whose server is this kpool's read-only proxy to the
cluster's Kubernetes API and whose user runs "kpool config kube-credential" (a
client-go exec credential plugin) to hand kubectl your kpool token. It holds no
secret. With --context, the plugin uses that kpool context; otherwise the
environment (KPOOL_TOKEN) or the current context when kubectl runs it.

The proxy takes reads only (get, list, watch); kpool reaches the cluster with
its own access, which you never see. Secrets, exec, attach, port-forward and
node/pod/service proxies are refused. client-go sends no credential to an
http:// server, so the kpool server must be served over HTTPS.`,
		Example: `  kpool cluster kubeconfig prod > prod.kubeconfig
  kubectl --kubeconfig prod.kubeconfig get nodes -l kompox.dev/node-pool=web
  kubectl --kubeconfig <(kpool cluster kubeconfig prod --context prod) get nodes -w`,
		Args: idArg("cluster"),
		RunE: func(cmd *cobra.Command, args []string) error {
			y, err := f.client().Kubeconfig(cmd.Context(), args[0], f.context)
			if err != nil {
				return err
			}
			if f.output == outJSON {
				if y, err = yaml.YAMLToJSON(y); err != nil {
					return err
				}
				y = append(y, '\n')
			}
			_, err = cmd.OutOrStdout().Write(y)
			return err
		},
	}
}

// cloudNodes is the pool's node count at its cloud, as its controllers last
// reported it (the largest report; -1 when none said).
func cloudNodes(cmd *cobra.Command, c *api.Client, poolID string) (int, error) {
	doc, err := c.NodePoolStatus(cmd.Context(), poolID)
	if err != nil {
		return -1, err
	}
	n := -1
	for i := range doc.ControllerStatus {
		if a := doc.ControllerStatus[i].Meta().ActiveNodes; a != nil {
			n = max(n, *a)
		}
	}
	return n, nil
}
