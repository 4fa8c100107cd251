package driver

import (
	"context"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kpool/kpool/provider"
)

// Where Civo's cluster autoscaler application runs (its app.yaml).
const (
	autoscalerNamespace  = "kube-system"
	autoscalerDeployment = "cluster-autoscaler"
	nodesFlag            = "--nodes="
)

// bounds are a pool's autoscaling bounds, an entry --nodes=MIN:MAX:POOL
// of the autoscaler's command.
type bounds struct{ min, max int }

func (b bounds) flag(pool string) string {
	return nodesFlag + strconv.Itoa(b.min) + ":" + strconv.Itoa(b.max) + ":" + pool
}

// autoscaler is a cluster's autoscaler as the driver finds it: nil
// deps when the application is not installed.
type autoscaler struct {
	cluster *Cluster
	deps    deploymentClient
}

// deploymentClient is what the driver calls of the Deployments of
// kube-system.
type deploymentClient interface {
	Get(ctx context.Context, name string, o metav1.GetOptions) (*appsv1.Deployment, error)
	Update(ctx context.Context, d *appsv1.Deployment, o metav1.UpdateOptions) (*appsv1.Deployment, error)
}

// autoscalerOf reads a cluster from Civo and, when the autoscaler is
// installed (or install says to install it when it is not), the client
// of its Deployment in the cluster's Kubernetes API.
func (d *Driver) autoscalerOf(ctx context.Context, cl *Client, id string, install bool) (*autoscaler, error) {
	c, err := cl.Cluster(ctx, id)
	if err != nil {
		return nil, classify(err, "")
	}
	if !c.Has(AutoscalerApp) {
		if !install {
			return &autoscaler{cluster: c}, nil
		}
		if c, err = cl.Install(ctx, id, AutoscalerApp); err != nil {
			return nil, classify(err, "spec.autoscaling")
		}
	}
	apps, err := d.kube.get(id, c.KubeConfig, cl.checkKube, d.opts.Retry.TryTimeout)
	if e, ok := provider.Refused(platform, err); ok {
		return nil, e
	}
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: err.Error(), Err: err}
	}
	return &autoscaler{cluster: c, deps: apps.Deployments(autoscalerNamespace)}, nil
}

// entries reads every pool's bounds from the autoscaler's Deployment:
// one GET for the cluster; none when the application is not installed.
func (a *autoscaler) entries(ctx context.Context) (map[string]bounds, error) {
	if a.deps == nil {
		return nil, nil
	}
	dep, err := a.deps.Get(ctx, autoscalerDeployment, metav1.GetOptions{})
	if err != nil {
		return nil, classifyKube(err)
	}
	return parseEntries(dep), nil
}

// set writes one pool's entry (b nil: removes it) with a read-modify-write
// of the Deployment, tried again on a 409 Conflict (the Deployment's
// resourceVersion: another pool's change came first). Every other entry,
// another pool's or one a person made, stays as it is.
func (a *autoscaler) set(ctx context.Context, pool string, b *bounds) error {
	if a.deps == nil {
		return nil // not installed: no entry to remove
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := a.deps.Get(ctx, autoscalerDeployment, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) && b == nil {
				return nil // nothing to remove
			}
			return err
		}
		changed := setEntry(dep, pool, b)
		if b != nil && dropDefault(dep) {
			changed = true
		}
		if !changed {
			return nil
		}
		_, err = a.deps.Update(ctx, dep, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return classifyKube(err)
	}
	return nil
}

// shippedDefault is the entry the application's app.yaml ships: it names
// no pool of a Civo cluster, and Civo's autoscaler reads it as the bounds
// of every pool while no entry names one.
const shippedDefault = nodesFlag + "3:10:workers"

// dropDefault takes the shipped default entry out of the Deployment,
// verbatim only (a workers entry a person changed stays), and reports
// whether it was there: once kpool names pools, a default that would
// autoscale every pool (kpool's fixed ones too) when kpool's last entry
// goes must not stay behind.
func dropDefault(dep *appsv1.Deployment) bool {
	dropped := false
	for i := range dep.Spec.Template.Spec.Containers {
		c := &dep.Spec.Template.Spec.Containers[i]
		for _, list := range []*[]string{&c.Command, &c.Args} {
			n := len(*list)
			*list = slices.DeleteFunc(*list, func(arg string) bool { return arg == shippedDefault })
			dropped = dropped || len(*list) != n
		}
	}
	return dropped
}

// parseEntries reads the --nodes=MIN:MAX:POOL entries of the autoscaler's
// containers' command and args (the cluster autoscaler's --nodes flag, one
// per node group); a malformed one is no pool's.
func parseEntries(dep *appsv1.Deployment) map[string]bounds {
	out := map[string]bounds{}
	for _, ct := range dep.Spec.Template.Spec.Containers {
		for _, arg := range append(slices.Clone(ct.Command), ct.Args...) {
			if pool, b, ok := parseEntry(arg); ok {
				out[pool] = b
			}
		}
	}
	return out
}

func parseEntry(arg string) (string, bounds, bool) {
	v, ok := strings.CutPrefix(arg, nodesFlag)
	if !ok {
		return "", bounds{}, false
	}
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 || parts[2] == "" {
		return "", bounds{}, false
	}
	lo, err1 := strconv.Atoi(parts[0])
	hi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || lo < 0 || lo > hi {
		return "", bounds{}, false
	}
	return parts[2], bounds{lo, hi}, true
}

// setEntry puts pool's entry in the Deployment (b nil: takes it out) and
// reports whether anything changed. The entry replaces the pool's own
// where it was; a new one goes after the last entry, else at the end of
// the autoscaler container's command (or its args, if the command is
// not where the flags are).
func setEntry(dep *appsv1.Deployment, pool string, b *bounds) bool {
	cs := dep.Spec.Template.Spec.Containers
	if len(cs) == 0 {
		return false
	}
	changed, placed := false, false
	for i := range cs {
		for _, list := range []*[]string{&cs[i].Command, &cs[i].Args} {
			var out []string
			for _, arg := range *list {
				if p, _, ok := parseEntry(arg); ok && p == pool {
					if b != nil && !placed {
						out, placed = append(out, b.flag(pool)), true
						changed = changed || arg != b.flag(pool)
						continue
					}
					changed = true
					continue
				}
				out = append(out, arg)
			}
			*list = out
		}
	}
	if b == nil || placed {
		return changed
	}
	list := flagList(&cs[autoscalerContainer(cs)])
	at := len(*list)
	for i, arg := range *list {
		if strings.HasPrefix(arg, nodesFlag) {
			at = i + 1
		}
	}
	*list = slices.Insert(*list, at, b.flag(pool))
	return true
}

// autoscalerContainer is the container named cluster-autoscaler, else
// the first.
func autoscalerContainer(cs []corev1.Container) int {
	for i, c := range cs {
		if c.Name == autoscalerDeployment {
			return i
		}
	}
	return 0
}

// flagList is where a container's flags are: its command if that holds
// flags (app.yaml's does), else its args.
func flagList(c *corev1.Container) *[]string {
	for _, arg := range c.Command {
		if strings.HasPrefix(arg, "--") {
			return &c.Command
		}
	}
	if len(c.Args) > 0 || len(c.Command) == 0 {
		return &c.Args
	}
	return &c.Command
}
