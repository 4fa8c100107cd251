package driver

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.KubeReacher = (*Driver)(nil)

// KubeAccess returns how kpool reaches a cluster's Kubernetes API, the way
// GKE hands it out: the endpoint and CA of clusters.get (the server is
// https://<endpoint>), and a Google OAuth2 access token of the cluster's
// credential, which GKE's API servers take, with its expiry. The server is
// checked (provider.CheckKubeServer) before the token is got.
func (d *Driver) KubeAccess(ctx context.Context, c *kpool.Cluster) (*provider.KubeAccess, error) {
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	cl, err := cs.gke.Projects.Locations.Clusters.Get(parent(g)).Context(ctx).Do()
	if err != nil {
		return nil, classify(err, "")
	}
	var ca []byte
	if cl.MasterAuth != nil {
		ca, err = base64.StdEncoding.DecodeString(cl.MasterAuth.ClusterCaCertificate)
	}
	if cl.Endpoint == "" || len(ca) == 0 || err != nil {
		// A cluster being made has neither yet: asked again later.
		return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform,
			Reason: fmt.Sprintf("GKE names no endpoint or CA (base64 PEM) for cluster %s", g.ClusterName)}
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, err
	}
	server := "https://" + cl.Endpoint
	if err := provider.CheckKubeServer(profile, cr, c, server); err != nil {
		return nil, err
	}
	ts, err := d.token(cr)
	if err != nil {
		return nil, err
	}
	tok, err := ts.Token()
	if err != nil {
		if provider.IsRefusedHost(err) {
			return nil, err
		}
		// The token endpoint's answer is not quoted: it may echo what was sent.
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform,
			Reason: "no Google access token for credential " + cr.Name, Err: err}
	}
	return &provider.KubeAccess{Server: server, CA: ca, Token: tok.AccessToken, Expires: tok.Expiry}, nil
}
