package civo

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Quota is an account's quota of what Kubernetes nodes use: Civo's quota
// is "a combined allocation of instances/Kubernetes nodes, CPUs, RAM
// usage" and is account-wide, not per region (Civo's docs,
// account/quota). A zero limit limits nothing.
type Quota struct {
	Instances int // instance_count_limit: nodes
	CPUCores  int // cpu_core_limit
	RAMMB     int // ram_mb_limit
	DiskGB    int // disk_gb_limit
}

// DemoQuota is Demo's quota: room for a demo's pools, well above the
// example of Civo's API reference (civo.com/api/quota: 16 instances, 10
// cores, 5120 MB, 250 GB), which a second medium pool would exceed.
var DemoQuota = Quota{Instances: 64, CPUCores: 256, RAMMB: 512 * 1024, DiskGB: 8192}

// usage is what the account's nodes use, in every region: every instance
// the emulator holds, those being removed included (Civo's docs: a
// removal shows in the quota "once the system completes its
// reconciliation steps").
func (s *Server) usage() Quota {
	var u Quota
	for _, c := range s.clusters {
		for _, p := range c.pools {
			spec := sizes[p.size]
			n := len(p.insts)
			u.Instances += n
			u.CPUCores += n * spec.cpu
			u.RAMMB += n * spec.ramMB
			u.DiskGB += n * spec.diskGB
		}
	}
	return u
}

// checkQuota refuses n more nodes of size when they would take the
// account over a limit of its quota: quota_limit_reached, at a create or
// a scale up ("you would begin seeing 'Quota Limit Reached' errors ... if
// the autoscaler would try to scale the node count beyond what your quota
// allows", Civo's docs, kubernetes/advanced/scaling-nodes). The status is
// the emulator's (no recorded answer gives it); the details say which
// limit.
func (s *Server) checkQuota(size string, n int) *sim.Reply {
	if n <= 0 {
		return nil
	}
	u, spec, q := s.usage(), sizes[size], s.quota
	var over []string
	for _, l := range []struct {
		name          string
		limit, in, by int
	}{
		{"instance_count_limit", q.Instances, u.Instances, 1},
		{"cpu_core_limit", q.CPUCores, u.CPUCores, spec.cpu},
		{"ram_mb_limit", q.RAMMB, u.RAMMB, spec.ramMB},
		{"disk_gb_limit", q.DiskGB, u.DiskGB, spec.diskGB},
	} {
		if l.limit > 0 && l.in+n*l.by > l.limit {
			over = append(over, fmt.Sprintf("%s %d: %d in use, %d more %s nodes need %d", l.name, l.limit, l.in, n, size, n*l.by))
		}
	}
	if len(over) == 0 {
		return nil
	}
	return detailed(http.StatusBadRequest, codeQuota, reasonQuota, strings.Join(over, "; "))
}

// quotaView is GET /v2/quota's answer (civogo's Quota; the shape of
// civogo's quota_test.go TestGetQuota and civo.com/api/quota): the
// limits and usage the emulator keeps, and zeros for what it does not.
type quotaView struct {
	ID                         string `json:"id"`
	DefaultUserID              string `json:"default_user_id"`
	DefaultUserEmailAddress    string `json:"default_user_email_address"`
	InstanceCountLimit         int    `json:"instance_count_limit"`
	InstanceCountUsage         int    `json:"instance_count_usage"`
	CPUCoreLimit               int    `json:"cpu_core_limit"`
	CPUCoreUsage               int    `json:"cpu_core_usage"`
	RAMMegabytesLimit          int    `json:"ram_mb_limit"`
	RAMMegabytesUsage          int    `json:"ram_mb_usage"`
	DiskGigabytesLimit         int    `json:"disk_gb_limit"`
	DiskGigabytesUsage         int    `json:"disk_gb_usage"`
	DiskVolumeCountLimit       int    `json:"disk_volume_count_limit"`
	DiskVolumeCountUsage       int    `json:"disk_volume_count_usage"`
	DiskSnapshotCountLimit     int    `json:"disk_snapshot_count_limit"`
	DiskSnapshotCountUsage     int    `json:"disk_snapshot_count_usage"`
	PublicIPAddressLimit       int    `json:"public_ip_address_limit"`
	PublicIPAddressUsage       int    `json:"public_ip_address_usage"`
	SubnetCountLimit           int    `json:"subnet_count_limit"`
	SubnetCountUsage           int    `json:"subnet_count_usage"`
	NetworkCountLimit          int    `json:"network_count_limit"`
	NetworkCountUsage          int    `json:"network_count_usage"`
	SecurityGroupLimit         int    `json:"security_group_limit"`
	SecurityGroupUsage         int    `json:"security_group_usage"`
	SecurityGroupRuleLimit     int    `json:"security_group_rule_limit"`
	SecurityGroupRuleUsage     int    `json:"security_group_rule_usage"`
	PortCountLimit             int    `json:"port_count_limit"`
	PortCountUsage             int    `json:"port_count_usage"`
	LoadBalancerCountLimit     int    `json:"loadbalancer_count_limit"`
	LoadBalancerCountUsage     int    `json:"loadbalancer_count_usage"`
	ObjectStoreGigabytesLimit  int    `json:"objectstore_gb_limit"`
	ObjectStoreGigabytesUsage  int    `json:"objectstore_gb_usage"`
	DatabaseCountLimit         int    `json:"database_count_limit"`
	DatabaseCountUsage         int    `json:"database_count_usage"`
	DatabaseSnapshotCountLimit int    `json:"database_snapshot_count_limit"`
	DatabaseSnapshotCountUsage int    `json:"database_snapshot_count_usage"`
	DatabaseCPUCoreLimit       int    `json:"database_cpu_core_limit"`
	DatabaseCPUCoreUsage       int    `json:"database_cpu_core_usage"`
	DatabaseRAMMegabytesLimit  int    `json:"database_ram_mb_limit"`
	DatabaseRAMMegabytesUsage  int    `json:"database_ram_mb_usage"`
	DatabaseDiskGigabytesLimit int    `json:"database_disk_gb_limit"`
	DatabaseDiskGigabytesUsage int    `json:"database_disk_gb_usage"`
}

// getQuota answers GET /v2/quota: the account's, whatever the region.
func (s *Server) getQuota(*sim.Request) *sim.Reply {
	u := s.usage()
	return jsonReply(quotaView{
		ID: "kpool-cloudsim-account", DefaultUserID: "kpool-cloudsim-user", DefaultUserEmailAddress: "demo@cloudsim.invalid",
		InstanceCountLimit: s.quota.Instances, InstanceCountUsage: u.Instances, CPUCoreLimit: s.quota.CPUCores, CPUCoreUsage: u.CPUCores,
		RAMMegabytesLimit: s.quota.RAMMB, RAMMegabytesUsage: u.RAMMB, DiskGigabytesLimit: s.quota.DiskGB, DiskGigabytesUsage: u.DiskGB,
	})
}

// Usage returns what the account's nodes use now, as GET /v2/quota
// reports it.
func (s *Server) Usage() (u Quota) {
	s.Do(func(now time.Time) { s.heal(now); u = s.usage() })
	return u
}
