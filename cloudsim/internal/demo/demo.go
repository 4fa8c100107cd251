// Package demo holds what the emulators' demo data shares: the kpool
// cluster each emulated cluster registers as, and the words that list
// what it holds for people (cloudsim.Emulator's Clusters and Describe).
// The engine, cloudsim/sim, knows no kpool type; this package is where
// the emulators meet them.
package demo

import (
	"strings"

	"github.com/kpool/kpool"
)

// Cluster is an emulated cluster as kpool registers it when its emulator
// is served at endpoint: only Name and Spec are set.
func Cluster(name, endpoint string, p kpool.ClusterPlatform) kpool.Cluster {
	return kpool.Cluster{Name: name, Spec: kpool.ClusterSpec{Endpoint: endpoint, Platform: p}}
}

// List is names for people: "a, b, c", or "none".
func List(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
