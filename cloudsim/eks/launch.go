package eks

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// ltSpec is the EKS model's LaunchTemplateSpecification: the launch
// template's id or name (exactly one in a request; both in an answer)
// and its version (the template's default when a request gives none).
type ltSpec struct {
	ID      *string `json:"id,omitempty"`
	Name    *string `json:"name,omitempty"`
	Version *string `json:"version,omitempty"`
}

// given reports whether a request carries a launch template.
func (l *ltSpec) given() bool { return l != nil }

// resolve finds the launch template and version a request names, in the
// cluster's region; every refusal is InvalidParameterException, EKS's
// answer about a member of the request.
func (c *cluster) resolve(s *Server, name string, l *ltSpec) (*launchTemplate, *templateVersion, *sim.Reply) {
	id, ltName := ptr.Deref(l.ID, ""), ptr.Deref(l.Name, "")
	if (id == "") == (ltName == "") {
		// LaunchTemplateSpecification: "You must specify either the launch
		// template ID or the launch template name in the request, but not both."
		return nil, nil, invalid(c, name, "launchTemplate: specify either the launch template id or its name, but not both.")
	}
	var t *launchTemplate
	if id != "" {
		t, _ = s.templateByID(c.region, id)
	} else {
		t, _ = s.templateByName(c.region, ltName)
	}
	if t == nil {
		return nil, nil, invalid(c, name, "Launch template %s does not exist.", id+ltName)
	}
	v, ok := t.version(ptr.Deref(l.Version, ""))
	if !ok {
		return nil, nil, invalid(c, name, "Launch template %s has no version %s.", t.id, ptr.Deref(l.Version, ""))
	}
	return t, v, nil
}

// useTemplate checks a create's launch template against the rest of the
// request (CreateNodegroup: "If you specify launchTemplate, then don't
// specify diskSize" nor remoteAccess, "or the node group deployment will
// fail"; user data for managed node groups in the MIME multi-part archive
// format, user guide launch-templates.html) and records it on ng, which
// then has no diskSize of its own.
func (s *Server) useTemplate(c *cluster, ng *Nodegroup, in *createRequest) *sim.Reply {
	name := ng.NodegroupName
	t, v, rep := c.resolve(s, name, in.LaunchTemplate)
	if rep != nil {
		return rep
	}
	switch {
	case in.DiskSize != nil:
		return invalid(c, name, "Disk size must be specified within the launch template.")
	case len(in.RemoteAccess) > 0 && string(in.RemoteAccess) != "null":
		return invalid(c, name, "Remote access configuration cannot be specified with a custom launch template.")
	}
	if rep := checkUserData(c, name, ng.AmiType, v.userData); rep != nil {
		return rep
	}
	ng.DiskSize = nil
	ng.LaunchTemplate = &ltSpec{ID: ptr.To(t.id), Name: ptr.To(t.name), Version: ptr.To(itoa(v.number))}
	return nil
}

// checkUserData refuses user data an EKS AMI of the Amazon Linux families
// cannot merge with its own bootstrap: anything but a MIME multi-part
// archive (Bottlerocket takes TOML, Windows PowerShell: not checked).
func checkUserData(c *cluster, name, amiType, userData string) *sim.Reply {
	if userData == "" || !strings.HasPrefix(amiType, "AL2") {
		return nil
	}
	raw, _ := base64.StdEncoding.DecodeString(userData)
	if !isMultipart(raw) {
		return invalid(c, name, "User data in the launch template is not in the MIME multi-part archive format that Amazon EKS managed node groups require for %s.", amiType)
	}
	return nil
}

// isMultipart reports whether b is a MIME multi-part archive with at least
// one part.
func isMultipart(b []byte) bool {
	m, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		return false
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return false
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	p, err := r.NextPart()
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, p)
	return err == nil
}

// versionTemplate checks an UpdateNodegroupVersion's launch template: the
// node group must have been created with one, and it must be the same
// template ("the launch template ID or name must match what was used when
// the node group was created", UpdateNodegroupVersion). It returns the
// version to roll out.
func (s *Server) versionTemplate(c *cluster, g *nodegroup, l *ltSpec) (string, *sim.Reply) {
	if g.ng.LaunchTemplate == nil {
		return "", invalid(c, g.name, "Nodegroup %s was not created with a launch template: a launch template cannot be added to it; create a new node group.", g.name)
	}
	t, v, rep := c.resolve(s, g.name, l)
	if rep != nil {
		return "", rep
	}
	if t.id != ptr.Deref(g.ng.LaunchTemplate.ID, "") {
		return "", invalid(c, g.name, "Launch template %s is not the one node group %s was created with (%s): only its version can change.", t.id, g.name, ptr.Deref(g.ng.LaunchTemplate.ID, ""))
	}
	if rep := checkUserData(c, g.name, g.ng.AmiType, v.userData); rep != nil {
		return "", rep
	}
	return itoa(v.number), nil
}

func itoa(n int) string { return strconv.Itoa(n) }
