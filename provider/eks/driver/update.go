package driver

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// NodePoolUpdate changes a node group's mutable settings. Tags change at
// once (TagResource, UntagResource); scaling, labels and taints in one
// UpdateNodegroupConfig of add/remove diffs, with the updateConfig the
// strategy asks for; the version in an UpdateNodegroupVersion (forced
// when the strategy's onStuck is Force). EKS runs one update at a time on a node group,
// so a version change waits for the next call once a config update was
// started. The placement labels stay as the node group has them; with
// autoscaling on, the desired size stays the autoscaler's. An unmarked
// node group gets the spec's owner's mark; one another owner marked is
// refused (KindForeign).
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
		return nil, provider.NotFoundError(platform, "node group", s.ProviderName)
	}
	// Whatever this call sends, the next list reads the node group again.
	defer d.invalidate(c, s.ProviderName)
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
	ec2cl, err := d.ec2Client(ctx, c)
	if err != nil {
		return nil, err
	}
	observed, err := d.observeAll(ctx, ec2cl, c, ng)
	if err != nil {
		return nil, err
	}
	// Tags change one by one (TagResource): a mark another kpool wrote
	// after this describe would be kept by the next one, which refuses.
	if s.Owner, err = provider.Remark(platform, s.ProviderName, observed.Owner, s.Owner); err != nil {
		return nil, err
	}
	if err := provider.Refuse(profile, s, &observed); err != nil {
		return nil, err
	}
	s.Labels = provider.KeepPlacement(s.Labels, observed.Labels)

	if err := d.retag(ctx, cl, ng, tags(s)); err != nil {
		return nil, err
	}
	ng.Tags = tags(s)

	roll, err := rollTemplate(ctx, ec2cl, a.ClusterName, ng, s)
	if err != nil {
		return nil, err
	}
	cfg := configDiff(ng, s)
	switch {
	case cfg != nil:
		cfg.ClusterName, cfg.NodegroupName = aws.String(a.ClusterName), aws.String(s.ProviderName)
		if _, err := cl.UpdateNodegroupConfig(ctx, cfg); err != nil {
			return nil, classify(err, "")
		}
		applyConfig(ng, cfg)
		ng.Status = types.NodegroupStatusUpdating
	case !versionMatches(ng, s.Version) || roll != nil:
		if err := rollOut(ctx, cl, a.ClusterName, ng, s, roll); err != nil {
			return nil, err
		}
		ng.Status = types.NodegroupStatusUpdating
	}
	p := observe(c, ng)
	p.DiskType, p.DiskSizeGB, p.Settings, p.Extra["launchTemplate"] = observed.DiskType, observed.DiskSizeGB, observed.Settings, observed.Extra["launchTemplate"]
	if p.Shortage != nil {
		// Nothing sent: still short, with the instances counted.
		p.Nodes, p.ReadyNodes, p.ReadyUnknown, p.NodesByZone = observed.Nodes, observed.ReadyNodes, observed.ReadyUnknown, observed.NodesByZone
	}
	return &p, nil
}

// rollOut is one UpdateNodegroupVersion that rolls the nodes to the
// spec's version and to template version roll (nil: the template stays),
// whichever changed.
func rollOut(ctx context.Context, cl *awseks.Client, cluster string, ng *types.Nodegroup, s provider.PoolSpec, roll *types.LaunchTemplateSpecification) error {
	in := &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(s.ProviderName), LaunchTemplate: roll, Force: force(s)}
	field := "spec.platform.aws"
	if !versionMatches(ng, s.Version) {
		version, release := versions(s.Version)
		in.Version, field = aws.String(version), "spec.kubernetesVersion"
		if release != "" {
			in.ReleaseVersion = aws.String(release)
		}
	}
	if _, err := cl.UpdateNodegroupVersion(ctx, in); err != nil {
		return classify(err, field)
	}
	return nil
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
// spec's scaling, labels, taints and updateConfig (the strategy's
// maxUnavailable); nil when they already are.
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
	if uc := wantedUpdateConfig(s.Upgrade); uc != nil && !sameUpdateConfig(ng.UpdateConfig, uc) {
		if ng.UpdateConfig != nil {
			uc.UpdateStrategy = ng.UpdateConfig.UpdateStrategy // not kpool's: sent back as it is
		}
		in.UpdateConfig, changed = uc, true
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
	if in.UpdateConfig != nil {
		ng.UpdateConfig = in.UpdateConfig
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
