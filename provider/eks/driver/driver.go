// Package driver is the EKS driver: kpool node pools as EKS managed node
// groups, through the official SDK (aws-sdk-go-v2/service/eks). What kpool
// knows of EKS without the SDK is its profile, package eks.
package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
)

const platform = eks.Type

var profile = eks.Profile{}

// Options configure the driver.
type Options struct {
	// Credentials say which of the operator's credentials each cluster
	// uses, for which accounts, and the hosts it may be sent to. Nil means
	// provider.DefaultCredentials: the default chain, any account, the
	// public regional EKS endpoints only.
	Credentials provider.Credentials
	// Credential is the identity of credentials of kind "default". Nil
	// means the SDK's default chain (environment, shared config and
	// credentials files, web identity, ECS and EC2 roles), loaded when
	// first needed.
	Credential aws.CredentialsProvider
	// Transport sends the HTTP requests; nil is http.DefaultTransport. Set
	// it to trust the certificate of an endpoint the system does not.
	Transport http.RoundTripper
	// Retry is how the SDK times out and retries a call; nil is Retry().
	Retry *RetryOptions
}

// RetryOptions bound the SDK's retries of one call.
type RetryOptions struct {
	// MaxAttempts is the number of tries, the first included.
	MaxAttempts int
	// TryTimeout bounds each try, from sending the request to reading the
	// answer's body.
	TryTimeout time.Duration
	// MaxBackoff bounds the wait between tries.
	MaxBackoff time.Duration
}

// Retry returns the driver's retry options: no try outlives TryTimeout (a
// tarpit cannot hold a call for ever), and a failure a retry may cure (500,
// 502, 503, 504, a dropped connection, a try timed out) is tried twice
// more, quickly. Throttling is never retried here: it goes back to kpool's
// controllers, which back off without holding a worker. The node-group
// calls are idempotent (creates carry a clientRequestToken the SDK keeps
// across tries).
func Retry() RetryOptions {
	return RetryOptions{MaxAttempts: 3, TryTimeout: 30 * time.Second, MaxBackoff: 500 * time.Millisecond}
}

// cacheSize bounds the driver's clients: cluster specs choose their keys.
const cacheSize = 256

// Driver is the EKS driver.
type Driver struct {
	opts  Options
	retry RetryOptions
	creds provider.Credentials

	mu       sync.Mutex
	identity map[string]aws.CredentialsProvider // by credential name
	clients  map[string]*awseks.Client
}

// New returns an EKS driver.
func New(o Options) *Driver {
	d := &Driver{opts: o, retry: Retry(), identity: map[string]aws.CredentialsProvider{}, clients: map[string]*awseks.Client{}}
	if o.Retry != nil {
		d.retry = *o.Retry
	}
	d.creds = provider.CredentialsOr(o.Credentials, profile)
	return d
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns EKS's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// client returns the EKS client of a cluster's credential, region and
// endpoint (the region's public one unless the cluster names another).
// The credential must allow both: a cluster that names another host or
// account is refused here, before any request, and every request is
// checked again at the wire (guard).
func (d *Driver) client(ctx context.Context, c *kpool.Cluster) (*awseks.Client, *kpool.AWSCluster, error) {
	a := c.Spec.Platform.AWS
	if a == nil {
		return nil, nil, provider.ValidationError(platform, "spec.platform.aws", "cluster %s has no aws settings", c.Name)
	}
	if a.Region == "" {
		return nil, nil, provider.ValidationError(platform, "spec.platform.aws.region", "cluster %s names no region", c.Name)
	}
	if e := c.Spec.Endpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err != nil || u.Host == "":
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q is not an absolute URL", e)
		case !strings.EqualFold(u.Scheme, "https"):
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q: EKS must be reached over https: kpool sends no signed request over %s", e, u.Scheme)
		}
	}
	cr, err := d.creds.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	key := cr.Name + " " + a.Region + " " + c.Spec.Endpoint
	d.mu.Lock()
	defer d.mu.Unlock()
	if cl, ok := d.clients[key]; ok {
		return cl, a, nil
	}
	id, err := d.credential(ctx, cr)
	if err != nil {
		return nil, nil, err
	}
	r := d.retry
	o := awseks.Options{
		Region:      a.Region,
		Credentials: id,
		HTTPClient:  provider.NewGuard(cr, r.TryTimeout, d.opts.Transport),
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = max(r.MaxAttempts, 1)
			so.MaxBackoff = r.MaxBackoff
			so.RateLimiter = ratelimit.None
			so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(retryable)}
		}),
	}
	if c.Spec.Endpoint != "" {
		o.BaseEndpoint = aws.String(strings.TrimSuffix(c.Spec.Endpoint, "/"))
	}
	cl := awseks.New(o)
	if len(d.clients) >= cacheSize {
		clear(d.clients) // rare: many distinct endpoints; clients are cheap to make again
	}
	d.clients[key] = cl
	return cl, a, nil
}

// credential returns the AWS identity of a credential, made once. d.mu is
// held.
func (d *Driver) credential(ctx context.Context, cr *provider.Credential) (aws.CredentialsProvider, error) {
	if id, ok := d.identity[cr.Name]; ok {
		return id, nil
	}
	var id aws.CredentialsProvider
	var err error
	switch cr.Kind {
	case provider.CredentialDefault:
		id = d.opts.Credential
		if id == nil {
			var cfg aws.Config
			if cfg, err = config.LoadDefaultConfig(ctx); err == nil {
				id = cfg.Credentials
			}
		}
	case provider.CredentialEmulator:
		id, err = provider.IdentityOf[aws.CredentialsProvider](cr)
	case provider.CredentialStatic:
		var key, secret string
		if key, secret, err = cr.AccessKey(); err == nil {
			id = credentials.NewStaticCredentialsProvider(key, secret, "")
		}
	default:
		err = fmt.Errorf("kind %q is not an AWS credential kind", cr.Kind)
	}
	if err == nil && id == nil {
		err = errors.New("the default chain found no credentials")
	}
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no AWS credential " + cr.Name + ": " + err.Error(), Err: err}
	}
	id = identity{id}
	d.identity[cr.Name] = id
	return id, nil
}

// NodePoolList lists the cluster's node groups: ListNodegroups, paged,
// then DescribeNodegroup of each.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	var names []string
	pager := awseks.NewListNodegroupsPaginator(cl, &awseks.ListNodegroupsInput{ClusterName: aws.String(a.ClusterName)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, classify(err, "")
		}
		names = append(names, page.Nodegroups...)
	}
	// EKS lists names only: each node group is described, listDescribes
	// at a time. One whose describe fails for a passing reason (after the
	// SDK's retries) is reported Unknown, which the controllers wait on,
	// rather than failing the whole list: with a hundred node groups, one
	// bad answer in a hundred would otherwise stall the whole cluster.
	// Throttling and refusals still fail the list, so that the caller backs
	// off or reports them.
	pools := make([]*provider.Pool, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, listDescribes)
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ng, err := describe(ctx, cl, a, n)
			switch {
			case err != nil && provider.IsTransient(err) && !provider.IsThrottled(err) && ctx.Err() == nil:
				pools[i] = &provider.Pool{PoolSpec: provider.PoolSpec{ProviderName: n}, State: provider.StateUnknown,
					ReadyUnknown: true, Message: "DescribeNodegroup failed: " + err.Error()}
			case err != nil:
				errs[i] = err
			case ng != nil: // nil: deleted since it was listed
				p := observe(c, ng)
				pools[i] = &p
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var out []provider.Pool
	for _, p := range pools {
		if p != nil {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, nil
}

// listDescribes is how many DescribeNodegroup calls a list has in flight.
const listDescribes = 8

// describe reads one node group; a missing one is (nil, nil).
func describe(ctx context.Context, cl *awseks.Client, a *kpool.AWSCluster, name string) (*types.Nodegroup, error) {
	out, err := cl.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(name)})
	if err != nil {
		if nodegroupMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "")
	}
	return out.Nodegroup, nil
}

// NodePoolCreate creates a node group, or returns the existing one when it
// already matches.
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if !profile.Capabilities().Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(platform, "provider_name", "%q is not an EKS node group name: 1-63 letters, digits, '-' or '_', starting with a letter or digit", s.ProviderName)
	}
	if err := unsupported(s); err != nil {
		return nil, err
	}
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	in, err := createInput(c, a, s)
	if err != nil {
		return nil, err
	}
	existing, err := describe(ctx, cl, a, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return adopt(c, existing, s)
	}
	out, err := cl.CreateNodegroup(ctx, in)
	if err != nil {
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "node group " + s.ProviderName + " was created concurrently; list again", Err: err}
		}
		return nil, classify(err, "")
	}
	p := observe(c, out.Nodegroup)
	return &p, nil
}

// unsupported refuses what a managed node group without a launch template
// cannot take, which kpool does not make.
func unsupported(s provider.PoolSpec) error {
	switch {
	case s.Settings["userData"] != "":
		return provider.ValidationError(platform, "spec.platform.aws.userData", "user data needs a launch template, which the kpool EKS driver does not create")
	case s.DiskType != "" && s.DiskType != "gp2":
		// Without a launch template a managed node group's volume is gp2.
		return provider.ValidationError(platform, "spec.platform.aws.volumeType", "volume type %q needs a launch template, which the kpool EKS driver does not create (managed node groups without one use gp2)", s.DiskType)
	case len(s.Accelerators) > 0:
		return provider.NotImplementedError(platform, "EKS takes GPUs from the instance type, not from an accelerators list")
	}
	return nil
}

// createInput maps a neutral spec to CreateNodegroup.
func createInput(c *kpool.Cluster, a *kpool.AWSCluster, s provider.PoolSpec) (*awseks.CreateNodegroupInput, error) {
	subnets, err := subnetsOf(c, s.Zones)
	if err != nil {
		return nil, err
	}
	in := &awseks.CreateNodegroupInput{
		ClusterName:   aws.String(a.ClusterName),
		NodegroupName: aws.String(s.ProviderName),
		NodeRole:      aws.String(a.NodeRoleARN),
		Subnets:       subnets,
		ScalingConfig: scaling(s, -1),
		CapacityType:  types.CapacityTypesOnDemand,
		Labels:        copyMap(s.Labels),
		Tags:          copyMap(s.Tags),
	}
	if s.MachineType != "" {
		in.InstanceTypes = []string{s.MachineType}
	}
	if s.Spot {
		in.CapacityType = types.CapacityTypesSpot
	}
	if s.DiskSizeGB > 0 {
		in.DiskSize = aws.Int32(int32(s.DiskSizeGB))
	}
	if t := s.Settings["amiType"]; t != "" {
		in.AmiType = types.AMITypes(t)
	}
	for _, t := range s.Taints {
		in.Taints = append(in.Taints, taintOf(t))
	}
	version, release := versions(s.Version)
	if version != "" {
		in.Version = aws.String(version)
	}
	if release != "" {
		in.ReleaseVersion = aws.String(release)
	}
	return in, nil
}

// subnetsOf maps logical zones to the cluster's subnets: a pool in no zone
// gets every subnet of the cluster, in zone order.
func subnetsOf(c *kpool.Cluster, zones []string) ([]string, error) {
	a := c.Spec.Platform.AWS
	if len(zones) == 0 {
		var out []string
		for _, z := range kpool.SortedKeys(a.Subnets) {
			out = append(out, a.Subnets[z])
		}
		if len(out) == 0 {
			return nil, provider.ValidationError(platform, "spec.platform.aws.subnets", "cluster %s has no subnets", c.Name)
		}
		return out, nil
	}
	var out []string
	for _, z := range zones {
		id, err := eks.Subnet(c, z)
		if err != nil {
			return nil, provider.ValidationError(platform, "spec.zones", "%v", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// scaling maps the count and bounds to a scalingConfig. With autoscaling
// on, desiredSize is current (the autoscaler's) clamped to the bounds, or
// the spec's count when current is negative (a create); with it off,
// minSize = maxSize = desiredSize = the count, except that EKS wants
// maxSize >= 1: a pool of 0 nodes is min 0, max 1, desired 0.
func scaling(s provider.PoolSpec, current int) *types.NodegroupScalingConfig {
	if !s.Autoscaling {
		n := int32(s.Count)
		return &types.NodegroupScalingConfig{MinSize: aws.Int32(n), MaxSize: aws.Int32(max(n, 1)), DesiredSize: aws.Int32(n)}
	}
	want := s.Count
	if current >= 0 {
		want = current
	}
	want = min(max(want, s.MinCount), s.MaxCount)
	return &types.NodegroupScalingConfig{MinSize: aws.Int32(int32(s.MinCount)), MaxSize: aws.Int32(int32(s.MaxCount)), DesiredSize: aws.Int32(int32(want))}
}

var (
	minorRE   = regexp.MustCompile(`^v?(\d+\.\d+)(\.\d+)?$`)
	releaseRE = regexp.MustCompile(`^v?((\d+\.\d+)\.\d+-\d{8})$`)
)

// versions reads a kpool version as EKS's: 1.31 or 1.31.2 is the version
// 1.31 (EKS picks the patch); 1.31.2-20250101 is also the AMI release
// version.
func versions(v string) (version, release string) {
	if m := releaseRE.FindStringSubmatch(v); m != nil {
		return m[2], m[1]
	}
	if m := minorRE.FindStringSubmatch(v); m != nil {
		return m[1], ""
	}
	return v, "" // EKS refuses it, naming the field
}

// versionMatches reports whether a node group runs the spec's version.
func versionMatches(ng *types.Nodegroup, v string) bool {
	if v == "" {
		return true
	}
	version, release := versions(v)
	return aws.ToString(ng.Version) == version && (release == "" || aws.ToString(ng.ReleaseVersion) == release)
}

// adopt answers a create for a node group that exists: returned as it is
// when it matches, a validation error when a field only a new node group
// can change differs, ErrAlreadyExists when an update would do.
func adopt(c *kpool.Cluster, ng *types.Nodegroup, s provider.PoolSpec) (*provider.Pool, error) {
	if err := immutable(c, ng, s); err != nil {
		return nil, err
	}
	p := observe(c, ng)
	switch {
	case p.Autoscaling != s.Autoscaling,
		s.Autoscaling && (p.MinCount != s.MinCount || p.MaxCount != s.MaxCount),
		!s.Autoscaling && p.Count != s.Count,
		!provider.SameLabels(p.Labels, s.Labels), !provider.SameTaints(p.Taints, s.Taints),
		!provider.SameMap(p.Tags, s.Tags), !versionMatches(ng, s.Version):
		return nil, &provider.Error{Kind: provider.KindAlreadyExists, Provider: platform,
			Reason: "node group " + s.ProviderName + " exists with other mutable settings; update it"}
	}
	return &p, nil
}

// immutable refuses a spec that differs from an existing node group in a
// field EKS fixes at creation: instance types, subnets, capacity type,
// disk size.
func immutable(c *kpool.Cluster, ng *types.Nodegroup, s provider.PoolSpec) error {
	name := aws.ToString(ng.NodegroupName)
	want, err := subnetsOf(c, s.Zones)
	if err != nil {
		return err
	}
	capacity := "ON_DEMAND"
	if s.Spot {
		capacity = "SPOT"
	}
	type check struct{ field, old, next string }
	checks := []check{
		{"spec.platform.aws.instanceType", strings.Join(ng.InstanceTypes, ","), s.MachineType},
		{"spec.zones", strings.Join(sorted(ng.Subnets), ","), strings.Join(sorted(want), ",")},
		{"spec.platform.aws.spotInstances", string(ng.CapacityType), capacity},
	}
	if s.MachineType == "" {
		checks = checks[1:]
	}
	if s.DiskSizeGB > 0 {
		checks = append(checks, check{"spec.platform.aws.volumeSize", fmt.Sprint(aws.ToInt32(ng.DiskSize)), fmt.Sprint(s.DiskSizeGB)})
	}
	for _, ch := range checks {
		if ch.old != ch.next {
			return provider.ValidationError(platform, ch.field, "node group %s has %q and EKS cannot change it to %q in place; create a new pool", name, ch.old, ch.next)
		}
	}
	return nil
}

// NodePoolUpdate changes a node group's mutable settings. Tags change at
// once (TagResource, UntagResource); scaling, labels and taints in one
// UpdateNodegroupConfig of add/remove diffs; the version in an
// UpdateNodegroupVersion. EKS runs one update at a time on a node group,
// so a version change waits for the next call once a config update was
// started. The placement labels stay as the node group has them; with
// autoscaling on, the desired size stays the autoscaler's.
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := unsupported(s); err != nil {
		return nil, err
	}
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	ng, err := describe(ctx, cl, a, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if ng == nil {
		return nil, &provider.Error{Kind: provider.KindNotFound, Provider: platform, Reason: "node group " + s.ProviderName + " not found"}
	}
	if ng.Status == types.NodegroupStatusCreateFailed || ng.Status == types.NodegroupStatusDeleteFailed {
		// EKS takes no update of a node group whose create or delete
		// failed: it can only be deleted (again). Deleting it is the
		// repair; once it is gone, the pool is created again.
		if _, err := cl.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(s.ProviderName)}); err != nil {
			return nil, classify(err, "")
		}
		p := observe(c, ng)
		p.State, p.ProviderState = provider.StateDeleting, string(types.NodegroupStatusDeleting)
		p.Message = fmt.Sprintf("%s (%s): deleting it to create it again", ng.Status, p.Message)
		return &p, nil
	}
	if err := immutable(c, ng, s); err != nil {
		return nil, err
	}
	observed := observe(c, ng)
	labels := copyMap(s.Labels)
	for _, k := range []string{provider.LabelPool, provider.LabelZone} {
		if v, ok := observed.Labels[k]; ok {
			labels[k] = v
		} else {
			delete(labels, k)
		}
	}
	s.Labels = labels

	if err := d.retag(ctx, cl, ng, s.Tags); err != nil {
		return nil, err
	}
	ng.Tags = copyMap(s.Tags)

	cfg := configDiff(ng, s)
	switch {
	case cfg != nil:
		cfg.ClusterName, cfg.NodegroupName = aws.String(a.ClusterName), aws.String(s.ProviderName)
		if _, err := cl.UpdateNodegroupConfig(ctx, cfg); err != nil {
			return nil, classify(err, "")
		}
		applyConfig(ng, cfg)
		ng.Status = types.NodegroupStatusUpdating
	case !versionMatches(ng, s.Version):
		version, release := versions(s.Version)
		in := &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(s.ProviderName), Version: aws.String(version)}
		if release != "" {
			in.ReleaseVersion = aws.String(release)
		}
		if _, err := cl.UpdateNodegroupVersion(ctx, in); err != nil {
			return nil, classify(err, "spec.kubernetesVersion")
		}
		ng.Status = types.NodegroupStatusUpdating
	}
	p := observe(c, ng)
	return &p, nil
}

// retag makes a node group's tags want's: TagResource for the new and
// changed ones, UntagResource for those to drop.
func (d *Driver) retag(ctx context.Context, cl *awseks.Client, ng *types.Nodegroup, want map[string]string) error {
	add := map[string]string{}
	for k, v := range want {
		if old, ok := ng.Tags[k]; !ok || old != v {
			add[k] = v
		}
	}
	var drop []string
	for k := range ng.Tags {
		if _, ok := want[k]; !ok {
			drop = append(drop, k)
		}
	}
	sort.Strings(drop)
	if len(add) > 0 {
		if _, err := cl.TagResource(ctx, &awseks.TagResourceInput{ResourceArn: ng.NodegroupArn, Tags: add}); err != nil {
			return classify(err, "spec.tags")
		}
	}
	if len(drop) > 0 {
		if _, err := cl.UntagResource(ctx, &awseks.UntagResourceInput{ResourceArn: ng.NodegroupArn, TagKeys: drop}); err != nil {
			return classify(err, "spec.tags")
		}
	}
	return nil
}

// configDiff is the UpdateNodegroupConfig that takes a node group to the
// spec's scaling, labels and taints; nil when they already are.
func configDiff(ng *types.Nodegroup, s provider.PoolSpec) *awseks.UpdateNodegroupConfigInput {
	in := &awseks.UpdateNodegroupConfigInput{}
	changed := false
	cur := ng.ScalingConfig
	if cur == nil {
		cur = &types.NodegroupScalingConfig{}
	}
	want := scaling(s, int(aws.ToInt32(cur.DesiredSize)))
	if aws.ToInt32(cur.MinSize) != *want.MinSize || aws.ToInt32(cur.MaxSize) != *want.MaxSize || aws.ToInt32(cur.DesiredSize) != *want.DesiredSize {
		in.ScalingConfig, changed = want, true
	}
	labels := &types.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{}}
	for k, v := range s.Labels {
		if old, ok := ng.Labels[k]; !ok || old != v {
			labels.AddOrUpdateLabels[k] = v
		}
	}
	for _, k := range kpool.SortedKeys(ng.Labels) {
		if _, ok := s.Labels[k]; !ok {
			labels.RemoveLabels = append(labels.RemoveLabels, k)
		}
	}
	if len(labels.AddOrUpdateLabels)+len(labels.RemoveLabels) > 0 {
		in.Labels, changed = labels, true
	}
	taints := &types.UpdateTaintsPayload{}
	have := map[string]types.Taint{}
	for _, t := range ng.Taints {
		have[aws.ToString(t.Key)+":"+string(t.Effect)] = t
	}
	wanted := map[string]bool{}
	for _, t := range s.Taints {
		et := taintOf(t)
		id := aws.ToString(et.Key) + ":" + string(et.Effect)
		wanted[id] = true
		if old, ok := have[id]; !ok || aws.ToString(old.Value) != aws.ToString(et.Value) {
			taints.AddOrUpdateTaints = append(taints.AddOrUpdateTaints, et)
		}
	}
	for _, id := range kpool.SortedKeys(have) {
		if !wanted[id] {
			taints.RemoveTaints = append(taints.RemoveTaints, have[id])
		}
	}
	if len(taints.AddOrUpdateTaints)+len(taints.RemoveTaints) > 0 {
		in.Taints, changed = taints, true
	}
	if !changed {
		return nil
	}
	return in
}

// applyConfig applies an accepted config update to the node group read
// before it, for the answer.
func applyConfig(ng *types.Nodegroup, in *awseks.UpdateNodegroupConfigInput) {
	if in.ScalingConfig != nil {
		ng.ScalingConfig = in.ScalingConfig
	}
	if in.Labels != nil {
		ng.Labels = copyMap(ng.Labels)
		for _, k := range in.Labels.RemoveLabels {
			delete(ng.Labels, k)
		}
		for k, v := range in.Labels.AddOrUpdateLabels {
			ng.Labels[k] = v
		}
	}
	if in.Taints != nil {
		id := func(t types.Taint) string { return aws.ToString(t.Key) + ":" + string(t.Effect) }
		drop := map[string]bool{}
		for _, t := range append(append([]types.Taint(nil), in.Taints.RemoveTaints...), in.Taints.AddOrUpdateTaints...) {
			drop[id(t)] = true
		}
		var next []types.Taint
		for _, t := range ng.Taints {
			if !drop[id(t)] {
				next = append(next, t)
			}
		}
		ng.Taints = append(next, in.Taints.AddOrUpdateTaints...)
	}
}

// NodePoolDelete deletes a node group; a missing one is not an error.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cl, a, err := d.client(ctx, c)
	if err != nil {
		return err
	}
	_, err = cl.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(a.ClusterName), NodegroupName: aws.String(providerName)})
	if err != nil && !nodegroupMissing(err) {
		return classify(err, "")
	}
	return nil
}

// taintOf maps a kpool taint to EKS's.
func taintOf(t kpool.Taint) types.Taint {
	et := types.Taint{Key: aws.String(t.Key), Effect: effects[t.Effect]}
	if et.Effect == "" {
		et.Effect = types.TaintEffect(t.Effect) // EKS refuses it, naming it
	}
	if t.Value != "" {
		et.Value = aws.String(t.Value)
	}
	return et
}

var effects = map[string]types.TaintEffect{
	kpool.EffectNoSchedule:       types.TaintEffectNoSchedule,
	kpool.EffectPreferNoSchedule: types.TaintEffectPreferNoSchedule,
	kpool.EffectNoExecute:        types.TaintEffectNoExecute,
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
