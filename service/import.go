package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// PoolImport asks for one pool at the provider to be recorded as a kpool
// pool in observe mode (POST /clusters/{id}/imports).
type PoolImport struct {
	// ProviderName is the pool's name at the provider, as the cluster's
	// status lists it (unmarkedPools or foreignPools).
	ProviderName string `json:"providerName"`
	// Name is the kpool pool's name; empty: the pool's kompox.dev/node-pool
	// label when it has a valid one, else its provider name.
	Name string `json:"name,omitempty"`
	// Force imports a pool another owner marked; only admins may.
	Force bool `json:"force,omitempty"`
}

// ImportNodePool records a pool found at the provider that kpool does not
// know, in observe mode, for a cluster with spec.importPools. Only
// controllers import this way (a person imports with ImportProviderPool).
func (s *Service) ImportNodePool(ctx context.Context, clusterID, name, providerName string, spec kpool.NodePoolSpec) (*kpool.NodePool, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !id.Controller {
		return nil, kpool.Errorf(kpool.CodeForbidden, "only controllers import node pools")
	}
	onlyImporting := func(c *kpool.Cluster) error {
		if !c.Spec.ImportPools {
			return kpool.Errorf(kpool.CodeConflict, "Cluster '%s' does not import pools", c.Name)
		}
		return nil
	}
	return s.importPool(ctx, id, clusterID, &kpool.NodePool{Name: name, ProviderName: providerName, Spec: spec},
		"imported from the provider as "+providerName, onlyImporting)
}

// ImportProviderPool records one pool the controllers found at the
// provider as a kpool pool in observe mode, as a person asks: a pool the
// cluster's status lists, from the controllers' last list. An unmarked
// pool may be imported by whoever may change the cluster's pools; a pool
// another owner marked (another kpool's) only by an admin who forces it,
// since kpool would then report on another installation's pool. The audit
// trail says whose mark a forced import took.
func (s *Service) ImportProviderPool(ctx context.Context, clusterID string, in PoolImport) (*kpool.NodePool, error) {
	id, c, err := s.operableCluster(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	var fe kpool.FieldErrors
	if in.ProviderName == "" {
		fe.Add("providerName", "required: the pool's name at the provider, as the cluster's status lists it")
	}
	if in.Name != "" {
		kpool.ValidateName(&fe, "name", in.Name)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	p, detail, err := importable(id, c, in)
	if err != nil {
		return nil, err
	}
	return s.importPool(ctx, id, c.ID, p, detail, nil)
}

// importable finds a pool to import in the cluster's status: the pool it
// would be, and the audit trail's detail. A foreign pool needs an admin
// and force (409 naming its owner's mark otherwise); one the last list did
// not have is NOT_FOUND.
func importable(id *kpool.Identity, c *kpool.Cluster, in PoolImport) (*kpool.NodePool, string, error) {
	detail := "imported from the provider as " + in.ProviderName
	for _, f := range c.Status.Foreign {
		if f.ProviderName != in.ProviderName {
			continue
		}
		mark := markText(f)
		if !in.Force || !id.Admin {
			reason := fmt.Sprintf("pool %s at the provider carries the mark of %s: another kpool owns it; only an admin may import it, with force", f.ProviderName, mark)
			return nil, "", &kpool.Error{Code: kpool.CodeConflict, Message: fmt.Sprintf("Pool '%s' at the provider belongs to another kpool", f.ProviderName),
				Details: reason, Fields: []kpool.FieldError{{Field: "force", Reason: reason}}}
		}
		if f.Spec == nil {
			return nil, "", kpool.Errorf(kpool.CodeConflict, "Pool '%s' at the provider has not been read yet; try again once the controllers have listed it", f.ProviderName)
		}
		detail += ", forced: it carries the mark of " + mark
		return &kpool.NodePool{Name: importName(in, ""), ProviderName: f.ProviderName, Spec: *f.Spec}, detail, nil
	}
	for _, u := range c.Status.Unmarked {
		if u.ProviderName == in.ProviderName && u.Spec != nil {
			return &kpool.NodePool{Name: importName(in, u.Name), ProviderName: u.ProviderName, Spec: *u.Spec}, detail, nil
		}
	}
	return nil, "", &kpool.Error{Code: kpool.CodeNotFound, Message: fmt.Sprintf("No pool '%s' at the provider to import", in.ProviderName),
		Details: fmt.Sprintf("the controllers' last list of cluster %s has no unmarked or foreign pool of that name (a pool kpool has is not imported again)", c.Name)}
}

// markText names a foreign pool's mark.
func markText(f kpool.ForeignPool) string {
	s := "kpool installation " + f.Installation
	if f.Pool != "" {
		s += ", pool " + f.Pool
	}
	return s
}

// importName is an imported pool's name: the one asked for, else its
// kompox.dev/node-pool label when that is a valid name, else its provider
// name made one.
func importName(in PoolImport, label string) string {
	if in.Name != "" {
		return in.Name
	}
	var fe kpool.FieldErrors
	if kpool.ValidateName(&fe, "name", label); label != "" && len(fe) == 0 {
		return label
	}
	return strings.ToLower(strings.ReplaceAll(in.ProviderName, "_", "-"))
}

// importPool writes an imported pool, in observe mode, with its created
// event; check, when not nil, refuses a cluster the import may not go to.
func (s *Service) importPool(ctx context.Context, id *kpool.Identity, clusterID string, p *kpool.NodePool, detail string, check func(*kpool.Cluster) error) (*kpool.NodePool, error) {
	var c *kpool.Cluster
	err := s.write(ctx, false, func(tx kpool.Tx) (err error) {
		if c, err = tx.Cluster(clusterID); err != nil {
			return err
		}
		if c.Deleting() {
			return kpool.Errorf(kpool.CodeConflict, "Cluster '%s' is being deleted", c.Name)
		}
		if check != nil {
			if err := check(c); err != nil {
				return err
			}
		}
		p.Spec.Management = kpool.ManagementObserve
		s.defaults(&p.Spec, c)
		p.ID, p.ClusterID, p.CreatedBy, p.ClusterOwner, p.ClusterTeam = newID(), c.ID, id.Email, c.CreatedBy, c.Team
		if err := kpool.ValidateNodePool(s.Platforms, p, c); err != nil {
			return err
		}
		err = s.insertNew(ctx, tx, c, p, id.Email, detail)
		if errors.Is(err, kpool.ErrProviderNameTaken) {
			return kpool.Errorf(kpool.CodeConflict, "NodePool with provider name '%s' already exists in cluster", p.ProviderName)
		}
		return err
	})
	if err != nil {
		return nil, inCluster(err, c)
	}
	return p, nil
}

// foreignObserved refuses to let a caller who is not an admin observe a
// pool another owner marked by making (or turning) a pool of its provider
// name observed: that is a forced import, which only admins may make. A
// managed pool of that name may be made: its controller reports it
// ForeignPool and never touches the other's pool.
func foreignObserved(id *kpool.Identity, c *kpool.Cluster, p *kpool.NodePool) error {
	if !p.Spec.Observed() || id.Admin {
		return nil
	}
	for _, f := range c.Status.Foreign {
		if f.ProviderName == p.ProviderName {
			reason := fmt.Sprintf("pool %s at the provider carries the mark of %s: another kpool owns it, and only an admin may observe it (POST /clusters/%s/imports with force)",
				f.ProviderName, markText(f), c.ID)
			return &kpool.Error{Code: kpool.CodeConflict, Message: fmt.Sprintf("Pool '%s' at the provider belongs to another kpool", f.ProviderName),
				Details: reason, Fields: []kpool.FieldError{{Field: "spec.management", Reason: reason}}}
		}
	}
	return nil
}
