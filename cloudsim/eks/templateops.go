package eks

import (
	"encoding/xml"
	"maps"
	"strconv"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// maxTemplateVersions is EC2's bound on a launch template's versions
// (Amazon EC2 service quotas: 10,000 versions per launch template).
const maxTemplateVersions = 10000

// createLaunchTemplateVersion adds a version to a template, from
// SourceVersion's data when given (the request's replaces what it names),
// else from the request alone. The default version stays.
func (c *ec2Call) createLaunchTemplateVersion() *sim.Reply {
	t, rep := c.lookup()
	if rep != nil {
		return rep
	}
	if len(t.versions) >= maxTemplateVersions {
		return ec2Bad("LaunchTemplateVersionLimitExceeded", "The launch template %s already has %d versions.", t.id, maxTemplateVersions)
	}
	v, rep := c.templateData()
	if rep != nil {
		return rep
	}
	if src := c.f.Get("SourceVersion"); src != "" {
		base, ok := t.version(src)
		if !ok {
			return ec2Bad("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for launch template %s.", src, t.id)
		}
		if v.userData == "" {
			v.userData = base.userData
		}
		if v.devices == nil {
			v.devices = base.devices
		}
	}
	v.number = len(t.versions) + 1
	t.versions = append(t.versions, v)
	return ec2Reply(struct {
		XMLName   xml.Name   `xml:"CreateLaunchTemplateVersionResponse"`
		NS        string     `xml:"xmlns,attr"`
		RequestID string     `xml:"requestId"`
		Version   versionXML `xml:"launchTemplateVersion"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Version: t.versionXML(v)})
}

// describeLaunchTemplates answers the templates named by
// LaunchTemplateId.N or LaunchTemplateName.N (each must exist), or those
// of the region that pass the filters launch-template-name and tag:KEY.
func (c *ec2Call) describeLaunchTemplates() *sim.Reply {
	var out []templateXML
	ids, names := c.f.list("LaunchTemplateId"), c.f.list("LaunchTemplateName")
	for _, id := range ids {
		t, rep := c.s.templateByID(c.region, id)
		if rep != nil {
			return rep
		}
		out = append(out, t.xml())
	}
	for _, n := range names {
		t, rep := c.s.templateByName(c.region, n)
		if rep != nil {
			return rep
		}
		out = append(out, t.xml())
	}
	if len(ids)+len(names) == 0 {
		filters, rep := c.filters()
		if rep != nil {
			return rep
		}
		for _, t := range c.s.sortedTemplates(c.region) {
			if filters(t) {
				out = append(out, t.xml())
			}
		}
	}
	return ec2Reply(struct {
		XMLName   xml.Name      `xml:"DescribeLaunchTemplatesResponse"`
		NS        string        `xml:"xmlns,attr"`
		RequestID string        `xml:"requestId"`
		Templates []templateXML `xml:"launchTemplates>item"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Templates: out})
}

// filters reads Filter.N.Name and Filter.N.Value.M: a template passes
// when, for every filter, one of its values matches.
func (c *ec2Call) filters() (func(*launchTemplate) bool, *sim.Reply) {
	type filter struct {
		name   string
		values []string
	}
	var fs []filter
	for _, i := range c.f.indexes("Filter") {
		p := "Filter." + strconv.Itoa(i) + "."
		f := filter{name: c.f.Get(p + "Name"), values: c.f.list(p + "Value")}
		if f.name != "launch-template-name" && (len(f.name) < 5 || f.name[:4] != "tag:") {
			return nil, ec2Bad("InvalidParameterValue", "The filter '%s' is invalid (kpool cloudsim emulates launch-template-name and tag:KEY).", f.name)
		}
		fs = append(fs, f)
	}
	return func(t *launchTemplate) bool {
		for _, f := range fs {
			have, ok := t.name, true
			if f.name != "launch-template-name" {
				have, ok = t.tags[f.name[4:]]
			}
			match := false
			for _, v := range f.values {
				match = match || (ok && v == have)
			}
			if !match {
				return false
			}
		}
		return true
	}, nil
}

// describeLaunchTemplateVersions answers a template's versions: those
// LaunchTemplateVersion.N names (numbers, $Latest, $Default), or all.
func (c *ec2Call) describeLaunchTemplateVersions() *sim.Reply {
	t, rep := c.lookup()
	if rep != nil {
		return rep
	}
	var out []versionXML
	want := c.f.list("LaunchTemplateVersion")
	for _, w := range want {
		v, ok := t.version(w)
		if !ok {
			return ec2Bad("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for launch template %s.", w, t.id)
		}
		out = append(out, t.versionXML(v))
	}
	if len(want) == 0 {
		for _, v := range t.versions {
			out = append(out, t.versionXML(v))
		}
	}
	return ec2Reply(struct {
		XMLName   xml.Name     `xml:"DescribeLaunchTemplateVersionsResponse"`
		NS        string       `xml:"xmlns,attr"`
		RequestID string       `xml:"requestId"`
		Versions  []versionXML `xml:"launchTemplateVersionSet>item"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Versions: out})
}

// deleteLaunchTemplate deletes a template and all its versions.
func (c *ec2Call) deleteLaunchTemplate() *sim.Reply {
	t, rep := c.lookup()
	if rep != nil {
		return rep
	}
	delete(c.s.templates, t.region+"/"+t.name)
	return ec2Reply(struct {
		XMLName   xml.Name    `xml:"DeleteLaunchTemplateResponse"`
		NS        string      `xml:"xmlns,attr"`
		RequestID string      `xml:"requestId"`
		Template  templateXML `xml:"launchTemplate"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Template: t.xml()})
}

// maxEC2Tags is EC2's bound on a resource's tags (Tag your Amazon EC2
// resources, "Tag restrictions": 50 per resource).
const maxEC2Tags = 50

// createTags adds or changes tags of launch templates (ResourceId.N,
// Tag.N.Key and Tag.N.Value); kpool cloudsim has no other EC2 resources.
func (c *ec2Call) createTags() *sim.Reply {
	ids := c.f.list("ResourceId")
	if len(ids) == 0 {
		return ec2Bad("MissingParameter", "The request must contain the parameter resourceIdSet")
	}
	tags := map[string]string{}
	for _, i := range c.f.indexes("Tag") {
		k := c.f.Get("Tag." + strconv.Itoa(i) + ".Key")
		if k == "" || len(k) > 128 || strings.HasPrefix(k, "aws:") {
			return ec2Bad("InvalidParameterValue", "Tag key %q must be 1-128 characters and not start with aws:.", k)
		}
		tags[k] = c.f.Get("Tag." + strconv.Itoa(i) + ".Value")
	}
	var ts []*launchTemplate
	for _, id := range ids {
		t, rep := c.s.templateByID(c.region, id)
		if rep != nil {
			return rep
		}
		ts = append(ts, t)
	}
	for _, t := range ts {
		next := maps.Clone(t.tags)
		maps.Copy(next, tags)
		if len(next) > maxEC2Tags {
			return ec2Bad("TagLimitExceeded", "The maximum number of tags for resource %s has been reached.", t.id)
		}
	}
	for _, t := range ts {
		maps.Copy(t.tags, tags)
	}
	return ec2Reply(struct {
		XMLName   xml.Name `xml:"CreateTagsResponse"`
		NS        string   `xml:"xmlns,attr"`
		RequestID string   `xml:"requestId"`
		Return    bool     `xml:"return"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Return: true})
}
