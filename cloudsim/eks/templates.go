package eks

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// EC2's rules for launch templates (the EC2 API Reference,
// CreateLaunchTemplate, RequestLaunchTemplateData and
// LaunchTemplateEbsBlockDeviceRequest; the volume types and bounds of
// CreateVolume).
var (
	templateNameRE = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)
	volumeTypes    = map[string][2]int{"standard": {1, 1024}, "gp2": {1, 16384}, "gp3": {1, 16384},
		"io1": {4, 16384}, "io2": {4, 65536}, "st1": {125, 16384}, "sc1": {125, 16384}}
)

// maxUserData is EC2's bound on user data: 16 KB, before base64.
const maxUserData = 16 << 10

// launchTemplate is an EC2 launch template of a region.
type launchTemplate struct {
	id, name, region string
	created          time.Time
	token            string // the ClientToken of its create
	defaultVersion   int
	versions         []*templateVersion // version n at n-1
	tags             map[string]string
}

// templateVersion is a launch template version's data: what kpool
// cloudsim emulates of RequestLaunchTemplateData.
type templateVersion struct {
	number   int
	created  time.Time
	userData string // base64, as sent
	devices  []blockDevice
}

// blockDevice is a LaunchTemplateBlockDeviceMapping with its EBS volume.
type blockDevice struct {
	DeviceName string `xml:"deviceName,omitempty"`
	EBS        *ebs   `xml:"ebs,omitempty"`
}

type ebs struct {
	VolumeType          string `xml:"volumeType,omitempty"`
	VolumeSize          int    `xml:"volumeSize,omitempty"`
	Iops                int    `xml:"iops,omitempty"`
	Throughput          int    `xml:"throughput,omitempty"`
	Encrypted           *bool  `xml:"encrypted,omitempty"`
	DeleteOnTermination *bool  `xml:"deleteOnTermination,omitempty"`
}

// XML shapes of the EC2 model (locationName as the wire carries them).
type (
	tagXML struct {
		Key   string `xml:"key"`
		Value string `xml:"value"`
	}
	templateXML struct {
		ID             string   `xml:"launchTemplateId"`
		Name           string   `xml:"launchTemplateName"`
		CreateTime     string   `xml:"createTime"`
		CreatedBy      string   `xml:"createdBy"`
		DefaultVersion int      `xml:"defaultVersionNumber"`
		LatestVersion  int      `xml:"latestVersionNumber"`
		Tags           []tagXML `xml:"tagSet>item"`
	}
	dataXML struct {
		UserData string        `xml:"userData,omitempty"`
		Devices  []blockDevice `xml:"blockDeviceMappingSet>item"`
	}
	versionXML struct {
		ID             string  `xml:"launchTemplateId"`
		Name           string  `xml:"launchTemplateName"`
		Number         int     `xml:"versionNumber"`
		CreateTime     string  `xml:"createTime"`
		CreatedBy      string  `xml:"createdBy"`
		DefaultVersion bool    `xml:"defaultVersion"`
		Data           dataXML `xml:"launchTemplateData"`
	}
)

func ec2Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (t *launchTemplate) xml() templateXML {
	out := templateXML{ID: t.id, Name: t.name, CreateTime: ec2Time(t.created), CreatedBy: "arn:aws:iam::" + DemoAccount + ":root",
		DefaultVersion: t.defaultVersion, LatestVersion: len(t.versions)}
	for _, k := range slices.Sorted(maps.Keys(t.tags)) {
		out.Tags = append(out.Tags, tagXML{k, t.tags[k]})
	}
	return out
}

func (t *launchTemplate) versionXML(v *templateVersion) versionXML {
	return versionXML{ID: t.id, Name: t.name, Number: v.number, CreateTime: ec2Time(v.created), CreatedBy: "arn:aws:iam::" + DemoAccount + ":root",
		DefaultVersion: v.number == t.defaultVersion, Data: dataXML{UserData: v.userData, Devices: v.devices}}
}

// version finds a version by number, $Latest or $Default ("" is the
// default, as EKS and EC2 read an absent version).
func (t *launchTemplate) version(v string) (*templateVersion, bool) {
	switch v {
	case "", "$Default":
		return t.versions[t.defaultVersion-1], true
	case "$Latest":
		return t.versions[len(t.versions)-1], true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > len(t.versions) {
		return nil, false
	}
	return t.versions[n-1], true
}

// ec2Call is an EC2 Query request being served.
type ec2Call struct {
	s      *Server
	f      form
	region string
	now    time.Time
}

// templateData reads the LaunchTemplateData parameters kpool cloudsim
// emulates: UserData (base64, at most 16 KB decoded) and
// BlockDeviceMapping.N (DeviceName and Ebs.*); others are refused as not
// emulated, never dropped.
func (c *ec2Call) templateData() (*templateVersion, *sim.Reply) {
	const p = "LaunchTemplateData."
	v := &templateVersion{created: c.now, userData: c.f.Get(p + "UserData")}
	for k := range c.f.Values {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "UserData" && !strings.HasPrefix(rest, "BlockDeviceMapping.") {
			return nil, ec2Bad("InvalidParameterValue", "%s: kpool cloudsim emulates only UserData and BlockDeviceMapping of a launch template.", k)
		}
	}
	if v.userData != "" {
		raw, err := base64.StdEncoding.DecodeString(v.userData)
		if err != nil {
			return nil, ec2Bad("InvalidUserData.Malformed", "Invalid BASE64 encoding of user data.")
		}
		if len(raw) > maxUserData {
			return nil, ec2Bad("InvalidUserData.Malformed", "User data is limited to 16384 bytes, got %d.", len(raw))
		}
	}
	for _, i := range c.f.indexes(p + "BlockDeviceMapping") {
		d, rep := c.blockDevice(fmt.Sprintf("%sBlockDeviceMapping.%d.", p, i))
		if rep != nil {
			return nil, rep
		}
		v.devices = append(v.devices, d)
	}
	return v, nil
}

// blockDevice reads one BlockDeviceMapping: an EBS volume of a known type
// and a size in its type's bounds.
func (c *ec2Call) blockDevice(p string) (blockDevice, *sim.Reply) {
	d := blockDevice{DeviceName: c.f.Get(p + "DeviceName")}
	if d.DeviceName == "" {
		return d, ec2Bad("InvalidBlockDeviceMapping", "%sDeviceName is required.", p)
	}
	e := &ebs{VolumeType: c.f.Get(p + "Ebs.VolumeType")}
	for k := range c.f.Values {
		rest, ok := strings.CutPrefix(k, p)
		if !ok {
			continue
		}
		var err error
		switch rest {
		case "DeviceName", "Ebs.VolumeType":
		case "Ebs.VolumeSize":
			e.VolumeSize, err = strconv.Atoi(c.f.Get(k))
		case "Ebs.Iops":
			e.Iops, err = strconv.Atoi(c.f.Get(k))
		case "Ebs.Throughput":
			e.Throughput, err = strconv.Atoi(c.f.Get(k))
		case "Ebs.Encrypted", "Ebs.DeleteOnTermination":
			b, perr := strconv.ParseBool(c.f.Get(k))
			if rest == "Ebs.Encrypted" {
				e.Encrypted = &b
			} else {
				e.DeleteOnTermination = &b
			}
			err = perr
		default:
			return d, ec2Bad("InvalidParameterValue", "%s: kpool cloudsim does not emulate it.", k)
		}
		if err != nil {
			return d, ec2Bad("InvalidParameterValue", "%s %q is not valid: %v", k, c.f.Get(k), err)
		}
	}
	if *e != (ebs{}) {
		bounds, ok := volumeTypes[cmpOr(e.VolumeType, "gp2")]
		if !ok {
			return d, ec2Bad("InvalidParameterValue", "Value (%s) for parameter volumeType is invalid. Valid types: standard, io1, io2, gp2, sc1, st1, gp3.", e.VolumeType)
		}
		if e.VolumeSize != 0 && (e.VolumeSize < bounds[0] || e.VolumeSize > bounds[1]) {
			return d, ec2Bad("InvalidParameterValue", "Volume of %d GiB is out of range for a %s volume (%d-%d GiB).", e.VolumeSize, cmpOr(e.VolumeType, "gp2"), bounds[0], bounds[1])
		}
		d.EBS = e
	}
	return d, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lookup finds the launch template the request names by
// LaunchTemplateId or LaunchTemplateName (exactly one).
func (c *ec2Call) lookup() (*launchTemplate, *sim.Reply) {
	id, name := c.f.Get("LaunchTemplateId"), c.f.Get("LaunchTemplateName")
	switch {
	case (id == "") == (name == ""):
		return nil, ec2Bad("MissingParameter", "Either launchTemplateId or launchTemplateName must be specified, but not both.")
	case id != "":
		return c.s.templateByID(c.region, id)
	default:
		return c.s.templateByName(c.region, name)
	}
}

func (s *Server) templateByID(region, id string) (*launchTemplate, *sim.Reply) {
	if !strings.HasPrefix(id, "lt-") {
		return nil, ec2Bad("InvalidLaunchTemplateId.Malformed", "The specified ID (%s) is not valid. Specify a valid launch template ID.", id)
	}
	for _, t := range s.templates {
		if t.region == region && t.id == id {
			return t, nil
		}
	}
	return nil, ec2Bad("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
}

func (s *Server) templateByName(region, name string) (*launchTemplate, *sim.Reply) {
	if t, ok := s.templates[region+"/"+name]; ok {
		return t, nil
	}
	return nil, ec2Bad("InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name %s, does not exist.", name)
}

// createLaunchTemplate makes a template with its first version, the
// default; a retry with the same ClientToken answers the same template.
func (c *ec2Call) createLaunchTemplate() *sim.Reply {
	name, token := c.f.Get("LaunchTemplateName"), c.f.Get("ClientToken")
	if !templateNameRE.MatchString(name) {
		return ec2Bad("InvalidLaunchTemplateName.MalformedException", "A launch template name must be between 3 and 128 characters, and may contain only letters, numbers, and the following characters: - ( ) . / _.")
	}
	if t, ok := c.s.templates[c.region+"/"+name]; ok {
		if token != "" && token == t.token {
			return c.createAnswer(t)
		}
		return ec2Bad("InvalidLaunchTemplateName.AlreadyExistsException", "Launch template name already in use.")
	}
	v, rep := c.templateData()
	if rep != nil {
		return rep
	}
	tags := map[string]string{}
	for _, i := range c.f.indexes("TagSpecification") {
		p := fmt.Sprintf("TagSpecification.%d.", i)
		if rt := c.f.Get(p + "ResourceType"); rt != "launch-template" {
			return ec2Bad("InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation: give launch-template.", rt)
		}
		for _, j := range c.f.indexes(p + "Tag") {
			tags[c.f.Get(fmt.Sprintf("%sTag.%d.Key", p, j))] = c.f.Get(fmt.Sprintf("%sTag.%d.Value", p, j))
		}
	}
	c.s.ltSeq++
	v.number = 1
	t := &launchTemplate{id: fmt.Sprintf("lt-%017x", c.s.ltSeq), name: name, region: c.region, created: c.now, token: token,
		defaultVersion: 1, versions: []*templateVersion{v}, tags: tags}
	c.s.templates[c.region+"/"+name] = t
	return c.createAnswer(t)
}

func (c *ec2Call) createAnswer(t *launchTemplate) *sim.Reply {
	return ec2Reply(struct {
		XMLName   xml.Name    `xml:"CreateLaunchTemplateResponse"`
		NS        string      `xml:"xmlns,attr"`
		RequestID string      `xml:"requestId"`
		Template  templateXML `xml:"launchTemplate"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Template: t.xml()})
}
