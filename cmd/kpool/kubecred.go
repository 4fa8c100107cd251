package main

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
)

// kpool config kube-credential: the client-go exec credential plugin of the
// kubeconfigs kpool serves. It hands client-go the caller's own kpool token,
// so that the kubeconfig holds no secret; and only for the kpool server the
// token is for (a guard against a mix-up, not against a hostile kubeconfig,
// which may run any command it likes).

// execInfoEnv is where client-go gives an exec plugin its ExecCredential
// request (with the cluster, as provideClusterInfo asks).
const execInfoEnv = "KUBERNETES_EXEC_INFO"

func newKubeCredential() *cobra.Command {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:   "kube-credential",
		Short: "Print your kpool token as a client-go ExecCredential (the exec plugin of kpool's kubeconfigs)",
		Long: `kubectl runs this as the credential plugin of the kubeconfigs that
"kpool cluster kubeconfig" prints (client.authentication.k8s.io/v1): it prints
an ExecCredential carrying your kpool API token, from --token, KPOOL_TOKEN or
the context (--context). Run by hand, outside client-go, it refuses. It refuses when the kubeconfig's server is not the kpool
server the token is for (--server, KPOOL_SERVER or the context's), so that a
kubeconfig of one kpool does not get your token for another.`,
		Example: `  # in a kubeconfig's user (kpool cluster kubeconfig writes it):
  #   exec: {apiVersion: client.authentication.k8s.io/v1, command: kpool, args: [config, kube-credential, --context, prod]}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(f.token) == "" {
				return errors.New("kpool's Kubernetes API proxy takes an API token: set KPOOL_TOKEN (or --token), or use a context with a token (--context)")
			}
			if err := sameKpool(os.Getenv(execInfoEnv), f.server); err != nil {
				return err
			}
			out, err := json.Marshal(clientauthv1.ExecCredential{
				TypeMeta: metav1.TypeMeta{Kind: "ExecCredential", APIVersion: clientauthv1.SchemeGroupVersion.String()},
				Status:   &clientauthv1.ExecCredentialStatus{Token: strings.TrimSpace(f.token)},
			})
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(append(out, '\n'))
			return err
		},
	}
	f.register(cmd)
	return cmd
}

// sameKpool checks that the cluster client-go asks a credential for (info,
// the KUBERNETES_EXEC_INFO document) is served by the kpool server at
// server: the same scheme, host and port, under its clusters' proxy path.
// Run by hand (no document), it refuses: the token is for client-go, not a
// terminal's scrollback.
func sameKpool(info, server string) error {
	if info == "" {
		return fmt.Errorf("kpool config kube-credential hands your token for kpool server %s to kubectl only: it runs from the kubeconfig that kpool cluster kubeconfig prints (%s is unset)", server, execInfoEnv)
	}
	var req clientauthv1.ExecCredential
	if err := json.Unmarshal([]byte(info), &req); err != nil {
		return fmt.Errorf("%s does not decode: %v", execInfoEnv, err)
	}
	if req.Spec.Cluster == nil {
		return fmt.Errorf("the kubeconfig does not give kpool its server (provideClusterInfo: true): get a new one with kpool cluster kubeconfig")
	}
	k, err1 := url.Parse(req.Spec.Cluster.Server)
	s, err2 := url.Parse(server)
	if err1 != nil || err2 != nil || k.Scheme != s.Scheme || !strings.EqualFold(k.Host, s.Host) ||
		!strings.HasPrefix(k.Path, strings.TrimSuffix(s.Path, "/")+"/api/v1/clusters/") {
		return fmt.Errorf("the kubeconfig's server %s is not a cluster of the kpool server %s: your kpool token is only sent there (use --context or KPOOL_SERVER for another kpool)", req.Spec.Cluster.Server, server)
	}
	return nil
}

// selfSignedRoot is the PEM of the last certificate of the --tls-cert file
// when it signed itself (a private CA, or a self-signed certificate), for
// the kubeconfigs kpool serves to trust; nil otherwise (a certificate of a
// public CA, which kubectl trusts already) or when there is none.
func selfSignedRoot(certFile string) []byte {
	if certFile == "" {
		return nil
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		return nil
	}
	var last *pem.Block
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			last = b
		}
	}
	if last == nil {
		return nil
	}
	c, err := x509.ParseCertificate(last.Bytes)
	if err != nil || c.CheckSignatureFrom(c) != nil {
		return nil
	}
	return pem.EncodeToMemory(last)
}
