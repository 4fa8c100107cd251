package oke

import (
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool/cloudsim/sim"
)

// TokenPath is the path of the request an OKE token is the signature of:
// `oci ce cluster generate-token` signs a GET of
// https://containerengine.<region>.oraclecloud.com/cluster_request/<cluster OCID>.
const TokenPath = "/cluster_request/"

// createKubeconfig answers CreateKubeconfig (POST
// /clusters/{id}/kubeconfig/content): the cluster's kubeconfig, version
// 2.0.0, whose user runs `oci ce cluster generate-token`; its server is
// the cluster's emulated Kubernetes API, whatever endpoint is asked for
// (the emulator has one).
func (s *Server) createKubeconfig(req *sim.Request) *sim.Reply {
	id := req.HTTP.PathValue("id")
	c, ok := s.clusters[id]
	if !ok {
		return notFound("cluster", id)
	}
	var in ce.CreateClusterKubeconfigContentDetails
	if rep := decodeStrict(req.Body, &in); rep != nil {
		return rep
	}
	if v := ptr.Deref(in.TokenVersion, "2.0.0"); v != "2.0.0" {
		return invalid("Invalid tokenVersion %s: the supported value is 2.0.0.", v)
	}
	if e := in.Endpoint; e != "" {
		if _, ok := ce.GetMappingCreateClusterKubeconfigContentDetailsEndpointEnum(string(e)); !ok {
			return invalid("Invalid endpoint %s: one of LEGACY_KUBERNETES, PUBLIC_ENDPOINT, PRIVATE_ENDPOINT, VCN_HOSTNAME.", e)
		}
	}
	rep := sim.NewReply(http.StatusOK)
	rep.Header.Set("Content-Type", "application/octet-stream")
	rep.Body = []byte(okeKubeconfig(s.kube.api.ServerURL(req.BaseURL(), id), c.ID, c.Region, s.caPEM()))
	return rep
}

// okeKubeconfig is a kubeconfig as OKE's CreateKubeconfig returns it: the
// cluster, user and context named after the last 11 characters of the
// cluster's OCID, and a user that execs the OCI CLI for a token.
func okeKubeconfig(server, clusterID, region string, ca []byte) string {
	suffix := clusterID
	if len(suffix) > 11 {
		suffix = suffix[len(suffix)-11:]
	}
	exec := &clientcmdv1.ExecConfig{APIVersion: "client.authentication.k8s.io/v1beta1", Command: "oci",
		Args: []string{"ce", "cluster", "generate-token", "--cluster-id", clusterID, "--region", region}, Env: []clientcmdv1.ExecEnvVar{}}
	cfg := clientcmdv1.Config{APIVersion: "v1", CurrentContext: "context-" + suffix,
		Clusters:  []clientcmdv1.NamedCluster{{Name: "cluster-" + suffix, Cluster: clientcmdv1.Cluster{Server: server, CertificateAuthorityData: ca}}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{Name: "user-" + suffix, AuthInfo: clientcmdv1.AuthInfo{Exec: exec}}},
		Contexts:  []clientcmdv1.NamedContext{{Name: "context-" + suffix, Context: clientcmdv1.Context{Cluster: "cluster-" + suffix, AuthInfo: "user-" + suffix}}},
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		panic(err) // a fixed shape: never fails
	}
	return "---\n" + string(out)
}

// tokenCheck reports whether token is one `oci ce cluster generate-token`
// made for cluster id with a key the emulator takes: the URL-safe base64
// of the signed GET's URL, https://<host>/cluster_request/<id>, whose
// query carries the request's authorization and date headers. The
// signature must verify (verify's rules) for host containerengine.<the
// cluster's region>.oraclecloud.com or the emulator's own loopback
// address, and the date must be within OCI's allowed clock skew of the
// wall clock (the client signs with its own clock).
func (s *Server) tokenCheck(id, token string) bool {
	raw, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(token); err != nil {
			return false
		}
	}
	u, err := url.Parse(string(raw))
	if err != nil || u.Scheme != "https" || u.Path != TokenPath+id || u.User != nil {
		return false
	}
	var region string
	s.Do(func(time.Time) {
		if c, ok := s.clusters[id]; ok {
			region = c.Region
		}
	})
	if region == "" || !tokenHost(u.Hostname(), region) {
		return false
	}
	q := u.Query()
	date, err := http.ParseTime(q.Get("date"))
	if err != nil || time.Since(date).Abs() > tokenWindow {
		return false
	}
	r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: u.Path}, Host: u.Host,
		Header: http.Header{"Authorization": {q.Get("authorization")}, "Date": {q.Get("date")}}}
	return s.verify(r, nil) == ""
}

// tokenHost says whether a token's URL may name host: OKE's public
// endpoint in the cluster's region, or a loopback address (the emulator).
func tokenHost(host, region string) bool {
	if strings.EqualFold(host, "containerengine."+region+".oraclecloud.com") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
