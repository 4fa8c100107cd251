package driver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Every node group kpool creates runs on a launch template of kpool's
// own, one per node group: its user data (spec.platform.aws.userData, in
// the MIME multi-part archive EKS merges with its bootstrap) and its root
// volume (volumeType, volumeSize). A change to either is a new version of
// the template, rolled out by UpdateNodegroupVersion; EKS refuses
// diskSize with a launch template, so the volume is the template's only
// (https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html).

// The tags kpool's templates carry: the cluster and node group they are
// for, and, once the node group is being deleted, the mark that lets the
// list delete the template when the node group is gone.
const (
	tagCluster   = "kpool.io/eks-cluster"
	tagNodegroup = "kpool.io/eks-nodegroup"
	tagDeleting  = "kpool.io/delete-with-nodegroup"
)

// rootDevice is the root volume's device of the EKS AMIs (Amazon Linux
// and Bottlerocket's OS volume).
const rootDevice = "/dev/xvda"

// templateName is the name of a node group's template: deterministic, so
// that a crash between the template's create and the node group's finds
// it again; unique in the region (cluster and node group); at most 128
// characters of EC2's alphabet.
func templateName(cluster, nodegroup string) string {
	n := "kpool-" + cluster + "-" + nodegroup
	if len(n) <= 128 {
		return n
	}
	sum := sha256.Sum256([]byte(cluster))
	return "kpool-" + nodegroup + "-" + hex.EncodeToString(sum[:8])
}

// boundary separates the parts of the MIME archive kpool wraps user data
// in.
const boundary = "==KPOOL-USERDATA=="

// mimeUserData is user data as a managed node group takes it: a MIME
// multi-part archive, as given when it is one already, else wrapped in
// one part of the type its first line says (a shell script by default).
func mimeUserData(ud string) string {
	if ud == "" || strings.HasPrefix(ud, "MIME-Version:") || strings.HasPrefix(ud, "Content-Type: multipart/") {
		return ud
	}
	ct := "text/x-shellscript"
	switch {
	case strings.HasPrefix(ud, "#cloud-config"):
		ct = "text/cloud-config"
	case strings.HasPrefix(ud, "apiVersion: node.eks.aws/"):
		ct = "application/node.eks.aws"
	}
	return "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"" + boundary + "\"\n\n--" + boundary +
		"\nContent-Type: " + ct + "; charset=\"us-ascii\"\n\n" + strings.TrimSuffix(ud, "\n") + "\n\n--" + boundary + "--\n"
}

// plainUserData reads back what mimeUserData made: the part kpool
// wrapped, or the archive as given.
func plainUserData(b64 string) string {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return b64
	}
	s := string(raw)
	head := "--" + boundary + "\n"
	i := strings.Index(s, head)
	if !strings.HasPrefix(s, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\""+boundary+"\"") || i < 0 {
		return s
	}
	_, body, ok := strings.Cut(s[i+len(head):], "\n\n")
	if !ok {
		return s
	}
	return strings.TrimSuffix(body, "\n\n--"+boundary+"--\n")
}

// volume is a template version's root volume and user data, as kpool
// compares them with the spec.
type volume struct {
	userData string // as the spec gives it
	typ      string
	sizeGB   int
}

// wanted is what a spec asks of its template.
func wanted(s provider.PoolSpec) volume {
	return volume{userData: s.Settings["userData"], typ: s.DiskType, sizeGB: s.DiskSizeGB}
}

// data is the launch template data of a spec's volume.
func (v volume) data() *ec2types.RequestLaunchTemplateData {
	d := &ec2types.RequestLaunchTemplateData{}
	if v.userData != "" {
		d.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(mimeUserData(v.userData))))
	}
	if v.typ != "" || v.sizeGB > 0 {
		e := &ec2types.LaunchTemplateEbsBlockDeviceRequest{DeleteOnTermination: aws.Bool(true)}
		if v.typ != "" {
			e.VolumeType = ec2types.VolumeType(v.typ)
		}
		if v.sizeGB > 0 {
			e.VolumeSize = aws.Int32(int32(v.sizeGB))
		}
		d.BlockDeviceMappings = []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String(rootDevice), Ebs: e}}
	}
	return d
}

// volumeOf reads a template version's volume.
func volumeOf(v *ec2types.LaunchTemplateVersion) volume {
	var out volume
	d := v.LaunchTemplateData
	if d == nil {
		return out
	}
	if d.UserData != nil {
		out.userData = plainUserData(*d.UserData)
	}
	for _, m := range d.BlockDeviceMappings {
		if aws.ToString(m.DeviceName) == rootDevice && m.Ebs != nil {
			out.typ, out.sizeGB = string(m.Ebs.VolumeType), int(aws.ToInt32(m.Ebs.VolumeSize))
		}
	}
	return out
}

// matches reports whether a template version gives what the spec asks:
// the fields the spec leaves unset are the template's to choose.
func (v volume) matches(want volume) bool {
	return v.userData == want.userData && (want.typ == "" || v.typ == want.typ) && (want.sizeGB == 0 || v.sizeGB == want.sizeGB)
}

// templateVersion reads a node group's template version (nil, nil when
// the template is gone).
func templateVersion(ctx context.Context, cl *ec2.Client, lt *types.LaunchTemplateSpecification) (*ec2types.LaunchTemplateVersion, error) {
	in := &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: lt.Id, Versions: []string{aws.ToString(lt.Version)}}
	if lt.Id == nil {
		in.LaunchTemplateId, in.LaunchTemplateName = nil, lt.Name
	}
	out, err := cl.DescribeLaunchTemplateVersions(ctx, in)
	if err != nil {
		if templateMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "spec.platform.aws")
	}
	if len(out.LaunchTemplateVersions) == 0 {
		return nil, nil
	}
	return &out.LaunchTemplateVersions[0], nil
}

// findTemplate finds a template by name (nil, nil when there is none).
func findTemplate(ctx context.Context, cl *ec2.Client, name string) (*ec2types.LaunchTemplate, error) {
	out, err := cl.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err != nil {
		if templateMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "spec.platform.aws")
	}
	if len(out.LaunchTemplates) == 0 {
		return nil, nil
	}
	return &out.LaunchTemplates[0], nil
}

// templateMissing reports whether EC2 says a template or version does not
// exist.
func templateMissing(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "InvalidLaunchTemplateName.NotFoundException", "InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateId.VersionNotFound":
		return true
	}
	return false
}

// ensureTemplate returns the launch template (id and version) a node
// group of spec s is to run: kpool's template of the node group, found by
// name (after a crash) or created, with a new version when its latest one
// does not give what s asks.
func ensureTemplate(ctx context.Context, cl *ec2.Client, cluster string, s provider.PoolSpec) (*types.LaunchTemplateSpecification, error) {
	name := templateName(cluster, s.ProviderName)
	want := wanted(s)
	t, err := findTemplate(ctx, cl, name)
	if err != nil {
		return nil, err
	}
	if t != nil {
		// Another kpool's template of the same name is never used.
		m := map[string]string{}
		for _, tag := range t.Tags {
			m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		if _, owner := provider.TagKeys.Take(m); !owner.IsZero() && owner != s.Owner {
			return nil, provider.ForeignError(platform, name, owner)
		}
	}
	if t != nil && marked(t) {
		// The template of a node group of the same name being deleted:
		// the list would delete it under the new node group. A new one.
		if err := deleteTemplate(ctx, cl, name); err != nil {
			return nil, err
		}
		t = nil
	}
	if t == nil {
		out, err := cl.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(name), LaunchTemplateData: want.data(),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: templateTags(cluster, s)}},
		})
		if err != nil {
			return nil, classify(err, "spec.platform.aws")
		}
		return &types.LaunchTemplateSpecification{Id: out.LaunchTemplate.LaunchTemplateId, Version: aws.String("1")}, nil
	}
	latest := strconv.FormatInt(aws.ToInt64(t.LatestVersionNumber), 10)
	v, err := templateVersion(ctx, cl, &types.LaunchTemplateSpecification{Id: t.LaunchTemplateId, Version: aws.String(latest)})
	if err != nil {
		return nil, err
	}
	if v != nil && volumeOf(v).matches(want) {
		return &types.LaunchTemplateSpecification{Id: t.LaunchTemplateId, Version: aws.String(latest)}, nil
	}
	return newVersion(ctx, cl, aws.ToString(t.LaunchTemplateId), want)
}

// newVersion adds a version giving want to a template.
func newVersion(ctx context.Context, cl *ec2.Client, id string, want volume) (*types.LaunchTemplateSpecification, error) {
	out, err := cl.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String(id), LaunchTemplateData: want.data()})
	if err != nil {
		return nil, classify(err, "spec.platform.aws")
	}
	n := strconv.FormatInt(aws.ToInt64(out.LaunchTemplateVersion.VersionNumber), 10)
	return &types.LaunchTemplateSpecification{Id: aws.String(id), Version: aws.String(n)}, nil
}

// templateTags mark a template as kpool's: the owner's mark and the
// cluster and node group it is for.
func templateTags(cluster string, s provider.PoolSpec) []ec2types.Tag {
	m := provider.TagKeys.Put(map[string]string{tagCluster: cluster, tagNodegroup: s.ProviderName}, s.Owner)
	var out []ec2types.Tag
	for _, k := range kpool.SortedKeys(m) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

// observeAll maps a node group to the neutral pool with what its launch
// template gives: the root volume's type and size and the user data. A
// node group whose template is gone reports what EKS says only.
func (d *Driver) observeAll(ctx context.Context, cl *ec2.Client, c *kpool.Cluster, ng *types.Nodegroup) (provider.Pool, error) {
	p, _, err := d.read(ctx, cl, c, ng, kept{})
	return p, err
}

// read is observeAll, and what a list keeps of the node group (kept). A
// short node group's instances are counted (countInstances). A numbered
// template version never changes, so what it gives is read once and kept
// (by endpoint, region, template id and version), and taken from last,
// the node group's last read, when it ran the same version: a read of a
// node group seen before reads no template.
func (d *Driver) read(ctx context.Context, cl *ec2.Client, c *kpool.Cluster, ng *types.Nodegroup, last kept) (provider.Pool, kept, error) {
	k := kept{ng: ng}
	if lt := ng.LaunchTemplate; lt != nil {
		key := c.Spec.Endpoint + " " + profile.Region(&c.Spec) + " " + aws.ToString(lt.Id) + ":" + aws.ToString(lt.Version)
		vol, known := d.volumes.Get(key)
		if !known && last.vol != nil && sameVersion(last.ng, lt) {
			vol, known = *last.vol, true
		}
		if !known {
			v, err := templateVersion(ctx, cl, lt)
			if err != nil {
				return observe(c, ng), k, err
			}
			if v != nil {
				vol = volumeOf(v)
				if _, err := strconv.Atoi(aws.ToString(lt.Version)); err == nil && lt.Id != nil {
					d.volumes.Add(key, vol)
				}
			}
			known = v != nil
		}
		if known {
			k.vol = &vol
		}
	}
	p := k.pool(c)
	if p.Shortage != nil {
		countInstances(ctx, cl, c, ng, &p)
	}
	return p, k, nil
}

// sameVersion reports whether node group was (nil: none) ran the numbered
// version lt of the same template.
func sameVersion(was *types.Nodegroup, lt *types.LaunchTemplateSpecification) bool {
	if was == nil || was.LaunchTemplate == nil || lt.Id == nil {
		return false
	}
	_, err := strconv.Atoi(aws.ToString(lt.Version))
	return err == nil && aws.ToString(was.LaunchTemplate.Id) == *lt.Id && aws.ToString(was.LaunchTemplate.Version) == aws.ToString(lt.Version)
}

// applyVolume sets a pool's disk and user data from its template's.
func applyVolume(p *provider.Pool, v volume) {
	p.DiskType, p.DiskSizeGB = v.typ, v.sizeGB
	if p.Settings == nil {
		p.Settings = map[string]string{}
	}
	p.Settings["userData"] = v.userData
}

// rollTemplate is the template version to roll a node group to when its
// template does not give what s asks (nil when it does): the latest
// version of kpool's template if it does, else a new one. A node group
// made without a launch template cannot take one (EKS: "You can update a
// node group using a launch template only if the node group was
// originally deployed with a launch template"), nor can kpool version a
// template that is not its own: both are refused.
func rollTemplate(ctx context.Context, cl *ec2.Client, cluster string, ng *types.Nodegroup, s provider.PoolSpec) (*types.LaunchTemplateSpecification, error) {
	want := wanted(s)
	lt := ng.LaunchTemplate
	if lt == nil {
		if want.userData == "" && want.typ == "" && (want.sizeGB == 0 || want.sizeGB == int(aws.ToInt32(ng.DiskSize))) {
			return nil, nil
		}
		return nil, provider.ValidationError(platform, volumeField(want), "node group %s was created without a launch template, which EKS cannot add to it: its user data and volume cannot change; create a new pool", s.ProviderName)
	}
	v, err := templateVersion(ctx, cl, lt)
	if err != nil {
		return nil, err
	}
	if v != nil && volumeOf(v).matches(want) {
		return nil, nil
	}
	if name := templateName(cluster, s.ProviderName); aws.ToString(lt.Name) != name {
		return nil, provider.ValidationError(platform, volumeField(want), "node group %s runs launch template %s, not kpool's (%s): kpool does not version it; create a new pool", s.ProviderName, aws.ToString(lt.Name), name)
	}
	latest, err := templateVersion(ctx, cl, &types.LaunchTemplateSpecification{Id: lt.Id, Name: lt.Name, Version: aws.String("$Latest")})
	if err != nil {
		return nil, err
	}
	if latest != nil && volumeOf(latest).matches(want) {
		n := strconv.FormatInt(aws.ToInt64(latest.VersionNumber), 10)
		return &types.LaunchTemplateSpecification{Id: lt.Id, Version: aws.String(n)}, nil
	}
	return newVersion(ctx, cl, aws.ToString(lt.Id), want)
}

// volumeField is the spec field a refused template change is about.
func volumeField(want volume) string {
	if want.userData != "" {
		return "spec.platform.aws.userData"
	}
	if want.typ != "" {
		return "spec.platform.aws.volumeType"
	}
	return "spec.platform.aws.volumeSize"
}
