package gke

import "github.com/kpool/kpool/provider"

var _ provider.KubeHosts = Profile{}

// KubeHostSuffixes are the hosts of GKE clusters' DNS-based control plane
// endpoints (ControlPlaneEndpointsConfig.DNSEndpointConfig.endpoint: "A DNS
// format address ... Ex: uid.us-central1.gke.goog"; Google's announcement,
// "A new flexible DNS-based approach for accessing the GKE control plane").
func (Profile) KubeHostSuffixes() []string { return []string{".gke.goog"} }

// KubeIPAddresses: a GKE cluster's endpoint is its control plane's IP
// address (Cluster.endpoint: "The IP address of this cluster's master
// endpoint").
func (Profile) KubeIPAddresses() bool { return true }
