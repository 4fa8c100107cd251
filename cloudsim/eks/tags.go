package eks

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kpool/kpool/cloudsim/sim"
)

// tagChars are the characters AWS tags allow: letters, digits and spaces
// representable in UTF-8, and _ . : / = + - @ (the EKS User Guide, "Tag
// restrictions": https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html),
// compiled on first use: its Unicode classes cost every kpool process's
// start 0.8 MB, emulator or not.
var tagChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`) })

// checkTags checks AWS resource tags; "" when they are fine. The rules are
// the EKS User Guide's tag restrictions (see tagChars) and the API's
// (CreateNodegroup, TagResource: at most 50 tags, keys of 1-128
// characters, values of at most 256, no aws: prefix).
func checkTags(tags map[string]string) string {
	if len(tags) > maxTags {
		return fmt.Sprintf("tags: at most %d tags, got %d.", maxTags, len(tags))
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		switch {
		case k == "" || utf8.RuneCountInString(k) > 128:
			return fmt.Sprintf("tags: key %q must be 1-128 characters.", k)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			return fmt.Sprintf("tags: key %q: the aws: prefix is reserved for AWS use.", k)
		case utf8.RuneCountInString(tags[k]) > 256:
			return fmt.Sprintf("tags: the value of key %q is longer than 256 characters.", k)
		case !tagChars().MatchString(k) || !tagChars().MatchString(tags[k]):
			return fmt.Sprintf("tags: key %q or its value has a character tags do not allow (letters, digits, spaces and _ . : / = + - @).", k)
		}
	}
	return ""
}

// byArn finds the node group of an ARN in the request's region.
func (s *Server) byArn(region, arn string) (*nodegroup, *sim.Reply) {
	// arn:aws:eks:REGION:ACCOUNT:nodegroup/CLUSTER/NAME/UUID
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "eks" {
		return nil, failf(errBadRequest, "%s is not a valid resource ARN.", arn)
	}
	res := strings.Split(parts[5], "/")
	if parts[3] == region && len(res) == 4 && res[0] == "nodegroup" {
		if c, ok := s.clusters[clusterKey(region, res[1])]; ok {
			if g, ok := c.nodegroups[res[2]]; ok && g.ng.NodegroupArn == arn {
				return g, nil
			}
		}
	}
	return nil, failf(errTagNotFound, "Resource %s not found.", arn)
}

func (s *Server) tagResource(req *call) *sim.Reply {
	g, rep := s.byArn(req.region, req.HTTP.PathValue("arn"))
	if rep != nil {
		return rep
	}
	var in struct {
		Tags map[string]string `json:"tags"`
	}
	if rep := decode(req, &in); rep != nil {
		return rep
	}
	if len(in.Tags) == 0 {
		return failf(errBadRequest, "tags must not be empty.")
	}
	merged := maps.Clone(g.ng.Tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, in.Tags)
	if msg := checkTags(merged); msg != "" {
		return failf(errBadRequest, "%s", msg)
	}
	g.ng.Tags = merged
	return jsonReply(struct{}{})
}

func (s *Server) untagResource(req *call) *sim.Reply {
	keys := req.HTTP.URL.Query()["tagKeys"]
	g, rep := s.byArn(req.region, req.HTTP.PathValue("arn"))
	if rep != nil {
		return rep
	}
	if len(keys) == 0 {
		return failf(errBadRequest, "tagKeys must not be empty.")
	}
	for _, k := range keys {
		delete(g.ng.Tags, k)
	}
	return jsonReply(struct{}{})
}

func (s *Server) listTags(req *call) *sim.Reply {
	g, rep := s.byArn(req.region, req.HTTP.PathValue("arn"))
	if rep != nil {
		return rep
	}
	tags := maps.Clone(g.ng.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	return jsonReply(map[string]any{"tags": tags})
}
