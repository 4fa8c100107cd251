package eks

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The EC2 side of the emulator: the launch template calls a managed node
// group's launch template needs (CreateLaunchTemplate,
// CreateLaunchTemplateVersion, DescribeLaunchTemplates,
// DescribeLaunchTemplateVersions, DeleteLaunchTemplate) on EC2's Query
// API, as aws-sdk-go-v2/service/ec2 and @aws-sdk/client-ec2 speak it: a
// form-encoded POST to / with Action=..., signed for service ec2, answered
// in XML in the 2016-11-15 namespace; errors are <Response><Errors> with
// status 400 (the EC2 model's awsEc2query protocol).
const ec2NS = "http://ec2.amazonaws.com/doc/2016-11-15/"

// ec2Path is where EC2's Query API is served.
const ec2Path = "/"

// isEC2 reports whether a request is for EC2's Query API.
func isEC2(r *http.Request) bool { return r.URL.Path == ec2Path }

// ec2Error is EC2's error body.
type ec2Error struct {
	XMLName   xml.Name `xml:"Response"`
	Code      string   `xml:"Errors>Error>Code"`
	Message   string   `xml:"Errors>Error>Message"`
	RequestID string   `xml:"RequestID"`
}

// ec2Fail answers an EC2 error code with status 400 (EC2 answers its
// client errors 400, its own failures 500 and 503).
func ec2Fail(status int, code, format string, args ...any) *sim.Reply {
	rep := sim.NewReply(status)
	b, _ := xml.Marshal(ec2Error{Code: code, Message: fmt.Sprintf(format, args...), RequestID: "00000000-0000-4000-8000-000000000000"})
	rep.Body = append([]byte(xml.Header), b...)
	rep.Header.Set("Content-Type", "text/xml;charset=UTF-8")
	return rep
}

// ec2Codes are EC2's codes for what AWS's front door refuses (the EC2
// API Reference, "Common client error codes"), by EKS's.
var ec2Codes = map[string]string{
	errMissingToken.name: "MissingAuthenticationToken", errIncompleteSig.name: "IncompleteSignature",
	errInvalidSignature.name: "SignatureDoesNotMatch", errUnrecognizedClient.name: "AuthFailure",
}

// ec2Refusal words an authentication refusal in EC2's shape.
func ec2Refusal(rep *sim.Reply) *sim.Reply {
	var e apiError
	_ = json.Unmarshal(rep.Body, &e)
	name, _, _ := strings.Cut(rep.Header.Get("X-Amzn-ErrorType"), ":")
	return ec2Fail(rep.Status, cmpOr(ec2Codes[name], "AuthFailure"), "%s", e.Message)
}

func ec2Bad(code, format string, args ...any) *sim.Reply {
	return ec2Fail(http.StatusBadRequest, code, format, args...)
}

// ec2Reply answers v, a response struct whose XMLName is the action's
// response element, in EC2's namespace.
func ec2Reply(v any) *sim.Reply {
	b, err := xml.Marshal(v)
	if err != nil {
		return ec2Fail(http.StatusInternalServerError, "InternalError", "kpool cloudsim: encoding the response: %v", err)
	}
	rep := sim.NewReply(http.StatusOK)
	rep.Body = append([]byte(xml.Header), b...)
	rep.Header.Set("Content-Type", "text/xml;charset=UTF-8")
	return rep
}

// form is a Query API request's parameters.
type form struct{ url.Values }

// list returns the values of a list parameter prefix.1, prefix.2, ...
func (f form) list(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := f.Values[prefix+"."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v[0])
	}
}

// indexes returns the N of the parameters prefix.N.* that the request
// has, in order.
func (f form) indexes(prefix string) []int {
	seen := map[int]bool{}
	for k := range f.Values {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(n); err == nil {
			seen[i] = true
		}
	}
	var out []int
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// ec2 serves EC2's Query API: the action the form names, in the region
// the request was signed for.
func (s *Server) ec2(req *sim.Request) *sim.Reply {
	if req.HTTP.Method != http.MethodPost {
		return ec2Bad("InvalidAction", "kpool cloudsim serves EC2's Query API by POST only.")
	}
	v, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return ec2Bad("MalformedQueryString", "The request body is not form-encoded: %v", err)
	}
	f := form{v}
	if ver := f.Get("Version"); ver != "2016-11-15" {
		return ec2Bad("InvalidParameterValue", "Version %q: kpool cloudsim serves EC2 API version 2016-11-15.", ver)
	}
	region := signedRegion(req.HTTP)
	c := &ec2Call{s: s, f: f, region: region, now: req.Now}
	action := f.Get("Action")
	req.SetOperation("EC2 " + action) // a Query API: one path, the action says what
	if s.denied[action] {
		return unauthorized(action)
	}
	switch action {
	case "CreateLaunchTemplate":
		return c.createLaunchTemplate()
	case "CreateLaunchTemplateVersion":
		return c.createLaunchTemplateVersion()
	case "DescribeLaunchTemplates":
		return c.describeLaunchTemplates()
	case "DescribeLaunchTemplateVersions":
		return c.describeLaunchTemplateVersions()
	case "DeleteLaunchTemplate":
		return c.deleteLaunchTemplate()
	case "CreateTags":
		return c.createTags()
	case "DescribeSubnets":
		return c.describeSubnets()
	case "DescribeInstanceTypeOfferings":
		return c.describeInstanceTypeOfferings()
	case "DescribeInstanceTypes":
		return c.describeInstanceTypes()
	case "DescribeInstances":
		return c.describeInstances()
	default:
		return ec2Bad("InvalidAction", "The action %s is not valid for this web service (kpool cloudsim emulates EC2's launch template actions, CreateTags on them, DescribeSubnets, DescribeInstanceTypeOfferings, DescribeInstanceTypes and DescribeInstances (a node group's) only).", action)
	}
}
