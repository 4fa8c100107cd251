package driver

import (
	"context"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// NodePoolList lists the cluster's node groups: ListNodegroups, paged;
// one DescribeLaunchTemplates for the templates to collect; and a
// DescribeNodegroup of only those the list's memory (provider.Refresh)
// says to read: new ones, those kpool wrote to since, those not settled
// at their last read, and provider.RefreshPerList of the settled ones, the
// longest unread first. The others are reported from their last read. A
// pass at rest so costs the same few calls whatever the number of node
// groups. EKS lists names only: a change made behind kpool's back to a
// settled node group (its scaling, labels, health) is seen when its turn
// comes, within ceil(settled/RefreshPerList) passes.
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
	ec2cl, err := d.ec2Client(ctx, c)
	if err != nil {
		return nil, err
	}
	collect(ctx, ec2cl, a.ClusterName, names)
	listed := make([]provider.Listed, len(names))
	for i, n := range names {
		listed[i] = provider.Listed{Name: n}
	}
	pass := d.reads.Plan(listKey(c, a), listed)
	out, err := d.describeAll(ctx, cl, ec2cl, c, a, pass, names)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, nil
}

// listDescribes is how many DescribeNodegroup calls a list has in flight.
const listDescribes = 8

// listKey is what the list's memory knows a cluster by: its node groups
// are those of a cluster name in a region, at an endpoint, with a
// credential (of one account).
func listKey(c *kpool.Cluster, a *kpool.AWSCluster) string {
	return c.Spec.Credential + " " + c.Spec.Endpoint + " " + a.Region + " " + a.ClusterName
}

// describeAll reports the listed node groups: those the pass reads
// described, listDescribes at a time, the others from their last read. One
// whose describe fails for a passing reason (after the SDK's retries) is
// reported Unknown, which the controllers wait on, rather than failing the
// whole list: with a hundred node groups, one bad answer in a hundred
// would otherwise stall the whole cluster. Throttling and refusals still
// fail the list, so that the caller backs off or reports them.
func (d *Driver) describeAll(ctx context.Context, cl *awseks.Client, ec2cl *ec2.Client, c *kpool.Cluster, a *kpool.AWSCluster,
	pass *provider.Pass[kept], names []string) ([]provider.Pool, error) {
	pools, err := pass.ReadAll(names, listDescribes, func(k kept) provider.Pool { return k.pool(c) },
		func(i int) (*provider.Pool, error) { return d.describeOne(ctx, cl, ec2cl, c, a, pass, names[i]) })
	if err != nil {
		return nil, err
	}
	var out []provider.Pool
	for _, p := range pools {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

// describeOne reads a listed node group and keeps the read in the pass: nil
// when it was deleted since it was listed, Unknown when its describe
// failed for a passing reason.
func (d *Driver) describeOne(ctx context.Context, cl *awseks.Client, ec2cl *ec2.Client, c *kpool.Cluster, a *kpool.AWSCluster,
	pass *provider.Pass[kept], name string) (*provider.Pool, error) {
	ng, err := describe(ctx, cl, a, name)
	var p provider.Pool
	var k kept
	if err == nil && ng != nil {
		last, _ := pass.Last(name)
		p, k, err = d.read(ctx, ec2cl, c, ng, last)
	}
	switch {
	case err != nil && provider.IsTransient(err) && !provider.IsThrottled(err) && ctx.Err() == nil:
		return &provider.Pool{PoolSpec: provider.PoolSpec{ProviderName: name}, State: provider.StateUnknown,
			ReadyUnknown: true, Message: "DescribeNodegroup failed: " + err.Error()}, nil
	case err != nil:
		return nil, err
	case ng == nil:
		return nil, nil
	}
	pass.Keep(name, k, provider.Settled(&p))
	return &p, nil
}

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

// kept is what the list keeps of a node group it read: the node group and
// what its launch template version gave (nil: it has none, or it is gone).
// It is observed again at each pass, on the cluster as it is then.
type kept struct {
	ng  *types.Nodegroup
	vol *volume
}

// pool is the node group observed with its template's volume.
func (k kept) pool(c *kpool.Cluster) provider.Pool {
	p := observe(c, k.ng)
	if k.vol != nil {
		applyVolume(&p, *k.vol)
		p.Extra["launchTemplate"] = aws.ToString(k.ng.LaunchTemplate.Name) + ":" + aws.ToString(k.ng.LaunchTemplate.Version)
	}
	return p
}

// invalidate has the next list read a node group kpool wrote to (or may
// have: a write that failed may have been applied).
func (d *Driver) invalidate(c *kpool.Cluster, name string) {
	if a := c.Spec.Platform.AWS; a != nil {
		d.reads.Invalidate(listKey(c, a), name)
	}
}
