package driver

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// tokenLifetime is how long kpool uses an OKE token: the OCI CLI's
// generate-token says it expires 4 minutes after it signed it, inside
// OCI's 5-minute allowed clock skew.
const tokenLifetime = 4 * time.Minute

// maxKubeconfig is the largest kubeconfig read from CreateKubeconfig.
const maxKubeconfig = 1 << 20

var _ provider.KubeReacher = (*Driver)(nil)

// KubeAccess reaches the cluster's Kubernetes API as OKE hands it out:
// CreateKubeconfig for the API server and its CA, and a token made as
// `oci ce cluster generate-token` makes it (the kubeconfig's exec command
// is never run), signed with the driver's identity for the cluster.
func (d *Driver) KubeAccess(ctx context.Context, c *kpool.Cluster) (*provider.KubeAccess, error) {
	cn, err := d.client(c)
	if err != nil {
		return nil, err
	}
	resp, err := cn.cl.CreateKubeconfig(provider.Detached(ctx), ce.CreateKubeconfigRequest{ClusterId: common.String(cn.oci.ClusterID),
		CreateClusterKubeconfigContentDetails: ce.CreateClusterKubeconfigContentDetails{TokenVersion: common.String("2.0.0")}})
	if err != nil {
		return nil, classify(err, resp.RawResponse, "")
	}
	defer resp.Content.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Content, maxKubeconfig))
	if err != nil {
		return nil, provider.Unanswered(platform, "OKE", err)
	}
	server, ca, err := kubeServer(raw)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "OKE's kubeconfig of cluster " + cn.oci.ClusterID + ": " + err.Error()}
	}
	if err := provider.CheckKubeServer(profile, cn.cr, c, server); err != nil {
		return nil, err
	}
	now := time.Now()
	tok, err := token(cn.cl.Signer, cn.endpoint, cn.oci.ClusterID, now)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "the OKE token could not be signed", Err: err}
	}
	return &provider.KubeAccess{Server: server, CA: ca, Token: tok, Expires: now.Add(tokenLifetime)}, nil
}

// kubeServer reads the API server and its CA (PEM) of a kubeconfig's
// current context.
func kubeServer(raw []byte) (string, []byte, error) {
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return "", nil, fmt.Errorf("not a kubeconfig")
	}
	cc, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return "", nil, fmt.Errorf("no current context")
	}
	cl, ok := cfg.Clusters[cc.Cluster]
	if !ok || cl.Server == "" {
		return "", nil, fmt.Errorf("no server for context %q", cfg.CurrentContext)
	}
	return cl.Server, cl.CertificateAuthorityData, nil
}

// token is what `oci ce cluster generate-token` prints as its token: the
// URL-safe base64 of the URL of a GET of <endpoint>/cluster_request/<the
// cluster's OCID> signed at now, with the signature's authorization and
// date headers in its query. endpoint is OKE's regional one, or the
// emulator's for a cluster there.
func token(signer common.HTTPRequestSigner, endpoint, clusterID string, now time.Time) (string, error) {
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/cluster_request/"+url.PathEscape(clusterID), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	if err := signer.Sign(req); err != nil {
		return "", err
	}
	q := url.Values{"authorization": {req.Header.Get("Authorization")}, "date": {req.Header.Get("Date")}}
	req.URL.RawQuery = q.Encode()
	return base64.URLEncoding.EncodeToString([]byte(req.URL.String())), nil
}
