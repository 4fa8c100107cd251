package driver

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// A node group's template outlives it by a little: EKS uses it until the
// node group is gone. Before DeleteNodegroup, kpool marks the template
// (tagDeleting); each list deletes the marked templates of the cluster
// whose node group it no longer finds. The mark is in EC2, so a crash at
// any point leaves the template to the next list, never orphaned.

// markDeleting marks a node group's template to go with it; a node group
// with no template of kpool's has nothing to mark.
func markDeleting(ctx context.Context, cl *ec2.Client, cluster, nodegroup string) error {
	t, err := findTemplate(ctx, cl, templateName(cluster, nodegroup))
	if err != nil || t == nil {
		return err
	}
	_, err = cl.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(t.LaunchTemplateId)},
		Tags: []ec2types.Tag{{Key: aws.String(tagDeleting), Value: aws.String("true")}}})
	if err != nil && !templateMissing(err) {
		return classify(err, "")
	}
	return nil
}

// marked reports whether a template carries the mark of a node group
// being deleted.
func marked(t *ec2types.LaunchTemplate) bool {
	return slices.ContainsFunc(t.Tags, func(tag ec2types.Tag) bool { return aws.ToString(tag.Key) == tagDeleting })
}

// collect deletes the cluster's marked templates whose node group is not
// among names (the node groups the list found). It is best effort: what
// fails now is tried at the next list.
func collect(ctx context.Context, cl *ec2.Client, cluster string, names []string) {
	out, err := cl.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + tagCluster), Values: []string{cluster}},
		{Name: aws.String("tag:" + tagDeleting), Values: []string{"true"}},
	}})
	if err != nil {
		return
	}
	for _, t := range out.LaunchTemplates {
		ng := ""
		for _, tag := range t.Tags {
			if aws.ToString(tag.Key) == tagNodegroup {
				ng = aws.ToString(tag.Value)
			}
		}
		if ng == "" || slices.Contains(names, ng) {
			continue
		}
		_, _ = cl.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: t.LaunchTemplateId})
	}
}

// deleteTemplate deletes a template by name; a missing one is no error.
func deleteTemplate(ctx context.Context, cl *ec2.Client, name string) error {
	_, err := cl.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
	if err != nil && !templateMissing(err) {
		return classify(err, "")
	}
	return nil
}
