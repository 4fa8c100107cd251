package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// Clusters: reads, and the writes of a transaction.

const clusterCols = `c.id, c.name, c.created_by, c.generation, c.resource_version, c.spec, c.status, c.created_at, c.updated_at,
	c.deletion_timestamp, c.team, coalesce(c.cloud_id, ''), c.credential_grant, c.kubeconfig_grant`

// clusterDest are where clusterCols scan to.
func clusterDest(c *kpool.Cluster) []any {
	return []any{&c.ID, &c.Name, &c.CreatedBy, &c.Generation, &c.ResourceVersion, jsonCol{&c.Spec}, jsonCol{&c.Status},
		timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt}, nullTimeCol{&c.DeletionTimestamp}, &c.Team, &c.CloudID, &c.Grant, &c.KubeconfigGrant}
}

func scanCluster(s Scanner) (*kpool.Cluster, error) {
	c := &kpool.Cluster{}
	return c, s.Scan(clusterDest(c)...)
}

// nullString stores "" as NULL: a cluster without a cloud identity
// conflicts with no other.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// visible adds to w the condition that selects what owner and teams may
// see: the clusters (alias c) owner registered and those of teams.
func visible(w *where, owner string, teams []string) {
	if owner == "" {
		return
	}
	cond := "c.created_by = ?"
	args := []any{strings.ToLower(owner)}
	if len(teams) > 0 {
		cond = "(" + cond + " OR c.team IN (?" + strings.Repeat(", ?", len(teams)-1) + "))"
		for _, t := range teams {
			args = append(args, t)
		}
	}
	w.add(cond, args...)
}

// ClusterByCloudID returns the cluster registered for a cloud cluster.
func (db *DB) ClusterByCloudID(ctx context.Context, cloudID string) (*kpool.Cluster, error) {
	var c *kpool.Cluster
	err := db.db.Read(ctx, db.read(`SELECT `+clusterCols+` FROM clusters c WHERE c.cloud_id = ?`, []any{cloudID}, func(s Scanner) (err error) {
		c, err = scanCluster(s)
		return err
	}))
	if err == nil && c == nil {
		err = clusterNotFound(cloudID)
	}
	return c, db.fail(ctx, err)
}

// InstallationID returns the id the schema's migration made.
func (db *DB) InstallationID(ctx context.Context) (string, error) {
	var id string
	err := db.db.Read(ctx, db.read(`SELECT id FROM installation`, nil, func(s Scanner) error { return s.Scan(&id) }))
	if err == nil && id == "" {
		err = fmt.Errorf("store: the database has no installation id")
	}
	return id, db.fail(ctx, err)
}

func clusterNotFound(id string) error {
	return &kpool.Error{Code: kpool.CodeNotFound, Message: "Cluster not found", Details: id}
}

// Cluster returns one cluster, deleting ones included.
func (db *DB) Cluster(ctx context.Context, id string) (*kpool.Cluster, error) {
	var c *kpool.Cluster
	err := db.db.Read(ctx, db.clusterRead(id, "", &c))
	if err == nil && c == nil {
		err = clusterNotFound(id)
	}
	return c, db.fail(ctx, err)
}

func (db *DB) clusterRead(id, lock string, out **kpool.Cluster) Read {
	return db.read(`SELECT `+clusterCols+` FROM clusters c WHERE c.id = ?`+lock, []any{id}, func(s Scanner) (err error) {
		*out, err = scanCluster(s)
		return err
	})
}

// Clusters lists clusters in (created_at, id) order with the total count.
func (db *DB) Clusters(ctx context.Context, f kpool.ClusterFilter) ([]*kpool.Cluster, int, error) {
	var w where
	visible(&w, f.Owner, f.Teams)
	if f.Name != "" {
		w.add("c.name = ?", f.Name)
	}
	tail, args := db.page(w, f.Page, "c", nil)
	out := []*kpool.Cluster{}
	var total int
	err := db.db.Read(ctx,
		db.read(`SELECT `+clusterCols+` FROM clusters c`+tail, args, func(s Scanner) error {
			c, err := scanCluster(s)
			out = append(out, c)
			return err
		}),
		db.read(`SELECT count(*) FROM clusters c`+w.String(), w.args, func(s Scanner) error { return s.Scan(&total) }))
	if err != nil {
		return nil, 0, db.fail(ctx, err)
	}
	return out, total, nil
}

// ClusterIDs returns every cluster's ID, in ID order.
func (db *DB) ClusterIDs(ctx context.Context) ([]string, error) {
	var out []string
	err := db.db.Read(ctx, db.read(`SELECT id FROM clusters ORDER BY id`, nil, func(s Scanner) error {
		var id string
		err := s.Scan(&id)
		out = append(out, id)
		return err
	}))
	if err != nil {
		return nil, db.fail(ctx, err)
	}
	return out, nil
}

func (t *tx) CreateCluster(c *kpool.Cluster) error {
	c.CreatedBy = strings.ToLower(c.CreatedBy)
	return t.queue(`INSERT INTO clusters (id, name, created_by, generation, resource_version, spec, status, created_at, updated_at,
		deletion_timestamp, team, cloud_id, credential_grant, kubeconfig_grant) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		[]any{c.ID, c.Name, c.CreatedBy, c.Generation, c.ResourceVersion, mustJSON(c.Spec), mustJSON(c.Status),
			t.db.d.Time(c.CreatedAt), t.db.d.Time(c.UpdatedAt), t.db.nullTime(c.DeletionTimestamp), c.Team, nullString(c.CloudID), c.Grant, c.KubeconfigGrant},
		func(_ int64, err error) error {
			switch name, _ := t.violation(err); name {
			case violationClusterID:
				return idTaken("Cluster")
			case violationClusterName:
				return kpool.Errorf(kpool.CodeConflict, "Cluster with name '%s' already exists", c.Name)
			case violationCloudID:
				return kpool.ErrCloudClusterTaken
			}
			return err
		})
}

func (t *tx) UpdateCluster(c *kpool.Cluster, from string) error {
	return t.oneRow(`UPDATE clusters SET spec = ?, status = ?, updated_at = ?, deletion_timestamp = ?,
		resource_version = ?, generation = ?, team = ?, cloud_id = ?, credential_grant = ?, kubeconfig_grant = ? WHERE id = ? AND resource_version = ?`,
		[]any{mustJSON(c.Spec), mustJSON(c.Status), t.db.d.Time(c.UpdatedAt), t.db.nullTime(c.DeletionTimestamp),
			c.ResourceVersion, c.Generation, c.Team, nullString(c.CloudID), c.Grant, c.KubeconfigGrant, c.ID, from},
		func() error { return kpool.Errorf(kpool.CodeConflict, "Cluster '%s' has been modified", c.Name) })
}

// DeleteCluster removes a cluster and its logical pools: their members
// are pools, which a cluster is deleted only without.
func (t *tx) DeleteCluster(id string) error {
	if err := t.queue(`DELETE FROM logical_pools WHERE cluster_id = ?`, []any{id}, plain); err != nil {
		return err
	}
	return t.queue(`DELETE FROM clusters WHERE id = ?`, []any{id}, plain)
}
