package aks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// A pool's machines, as AKS's Machines API lists them and deleteMachines
// takes them (REST: learn.microsoft.com/rest/api/aks/machines/list and
// learn.microsoft.com/rest/api/aks/agent-pools/delete-machines; the
// published examples MachineList.json, MachineGet.json and
// AgentPoolsDeleteMachines.json of api-version 2025-02-01, which
// armcontainerservice v6.6.0's MachinesClient and
// AgentPoolsClient.BeginDeleteMachines are generated from): a machine of
// a scale-set pool is named as its node, aks-<pool>-<number>-vmss<instance
// id in base 36, 6 digits> ("aks-nodepool1-42263519-vmss00000a"), and its
// properties.resourceId is its scale set instance's,
// …/virtualMachineScaleSets/aks-<pool>-<number>-vmss/virtualMachines/<id>.

// machineType is the ARM type of a machine (MachineList.json).
const machineType = "Microsoft.ContainerService/managedClusters/agentPools/machines"

// machineName is the name of a pool's machine of instance id i: the
// scale set's computer name prefix and the id in base 36, six digits
// (learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-instance-ids).
func machineName(p *pool, i int) string {
	return fmt.Sprintf("aks-%s-%s-vmss%06s", p.name, vmssID(p), strings.ToLower(strconv.FormatInt(int64(i), 36)))
}

// machineIndex reads a machine name of the pool back to its index.
func machineIndex(p *pool, name string) (int, bool) {
	prefix := fmt.Sprintf("aks-%s-%s-vmss", p.name, vmssID(p))
	rest, ok := strings.CutPrefix(strings.ToLower(name), prefix)
	if !ok || len(rest) != 6 {
		return 0, false
	}
	i, err := strconv.ParseInt(rest, 36, 32)
	return int(i), err == nil && machineName(p, int(i)) == strings.ToLower(name)
}

// vmResourceID is the resource id of instance i of the pool's scale set,
// in the node resource group rg (as Compute names it in a machine's
// resourceId; lower case in a node's providerID, nodes.go).
func vmResourceID(p *pool, rg string, i int) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/aks-%s-%s-vmss/virtualMachines/%d",
		p.cluster.subscription, rg, p.name, vmssID(p), i)
}

// machine is the Machine resource of instance i.
func (p *pool) machineResource(i int) *armcontainerservice.Machine {
	name := machineName(p, i)
	return &armcontainerservice.Machine{ID: ptr.To(p.id() + "/machines/" + name), Name: ptr.To(name), Type: ptr.To(machineType),
		Properties: &armcontainerservice.MachineProperties{ResourceID: ptr.To(vmResourceID(p, p.cluster.nodeResourceGroup(), i))}}
}

// listMachines (GET .../agentPools/{pool}/machines) lists the pool's
// machines now, one page (MachineListResult): the nodes it has, those an
// operation is adding or reimaging included.
func (s *Server) listMachines(req *request) *sim.Reply {
	_, p, rep := s.namedPool(req)
	if rep != nil {
		return rep
	}
	out := armcontainerservice.MachineListResult{Value: []*armcontainerservice.Machine{}}
	for _, m := range p.machinesAt(req.Now) {
		out.Value = append(out.Value, p.machineResource(m.id))
	}
	return jsonReply(http.StatusOK, out)
}

// getMachine (GET .../agentPools/{pool}/machines/{machine}) is one of
// them; another name is ARM's 404.
func (s *Server) getMachine(req *request) *sim.Reply {
	c, p, rep := s.namedPool(req)
	if rep != nil {
		return rep
	}
	name := req.vars["machine"]
	if id, ok := machineIndex(p, name); ok {
		for _, m := range p.machinesAt(req.Now) {
			if m.id == id {
				return jsonReply(http.StatusOK, p.machineResource(id))
			}
		}
	}
	return errorReply(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s/agentPools/%s/machines/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
		c.name, p.name, name, c.resourceGroup)
}

// deleteMachines (POST .../agentPools/{pool}/deleteMachines, body
// AgentPoolDeleteMachinesParameter, machineNames required) removes the
// named machines of the pool and lowers its count by as many; the others
// keep their instances and names. It is a long-running operation (202,
// FinalStateViaLocation), refused while another runs on the pool (409,
// as every write). A name that is not one of the pool's machines now, or
// is named twice, is refused and nothing is removed: 400 InvalidParameter
// with target machineNames (ErrorDetail; the wording is the emulator's).
func (s *Server) deleteMachines(req *request) *sim.Reply {
	c, p, rep := s.existingPool(req)
	if rep != nil {
		return rep
	}
	var in armcontainerservice.AgentPoolDeleteMachinesParameter
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v", err)
	}
	if len(in.MachineNames) == 0 {
		return targetedError(http.StatusBadRequest, "InvalidParameter", "machineNames", "The value of parameter machineNames is invalid: at least one machine name is required.")
	}
	count := int(ptr.Deref(p.props.Count, 0))
	live := p.vms[:min(p.ready, len(p.vms))]
	seen := map[int]bool{}
	for _, n := range in.MachineNames {
		id, ok := machineIndex(p, ptr.Deref(n, ""))
		if !ok || !slices.Contains(live, id) || seen[id] {
			return targetedError(http.StatusBadRequest, "InvalidParameter", "machineNames",
				"The value of parameter machineNames is invalid: machine '%s' is not a machine of agent pool '%s' (or is listed twice).", ptr.Deref(n, ""), p.name)
		}
		seen[id] = true
	}
	// The named instances go last, so that the scale-down removes them.
	keep := slices.DeleteFunc(slices.Clone(live), func(id int) bool { return seen[id] })
	p.vms = append(keep, slices.DeleteFunc(slices.Clone(live), func(id int) bool { return !seen[id] })...)
	p.props.Count = ptr.To(int32(count - len(seen)))
	p.etag = s.NewID()
	o := req.Start(stateScaling, p.ready, nodesOf(p.props), 0)
	s.startOp(o, c, p)
	return s.accepted(req, o, nil)
}

// Machines returns the names of a pool's machines, as deleteMachines
// takes them; nil when there is no such pool.
func (s *Server) Machines(subscription, resourceGroup, clusterName, name string) []string {
	var out []string
	s.Do(func(time.Time) {
		p, err := s.poolOf(subscription, resourceGroup, clusterName, name)
		if err != nil {
			return
		}
		for _, id := range p.vms[:min(p.ready, len(p.vms))] {
			out = append(out, machineName(p, id))
		}
	})
	return out
}
