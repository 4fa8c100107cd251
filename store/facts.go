package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kpool/kpool"
)

// ClusterFacts returns what kpool learnt of a cluster; nil when nothing
// has been learnt yet (or the cluster is gone).
func (db *DB) ClusterFacts(ctx context.Context, clusterID string) (*kpool.ClusterFacts, error) {
	var raw []byte
	err := db.db.Read(ctx, db.read(`SELECT facts FROM cluster_facts WHERE cluster_id = ?`, []any{clusterID}, func(s Scanner) error {
		return s.Scan(&raw)
	}))
	if err != nil || raw == nil {
		return nil, db.fail(ctx, err)
	}
	var f kpool.ClusterFacts
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("store: cluster %s's facts: %w", clusterID, err)
	}
	return &f, nil
}

// PutClusterFacts stores what kpool learnt of a cluster, replacing what it
// had; a cluster that is gone keeps nothing (its row would have no
// cluster: the foreign key refuses it, and that is not an error).
func (db *DB) PutClusterFacts(ctx context.Context, clusterID string, f *kpool.ClusterFacts) error {
	_, err := db.db.Exec(ctx, db.q(`INSERT INTO cluster_facts (cluster_id, facts, learned_at) VALUES (?, ?, ?)
		ON CONFLICT (cluster_id) DO UPDATE SET facts = excluded.facts, learned_at = excluded.learned_at`),
		clusterID, mustJSON(f), db.d.Time(f.LearnedAt))
	if name, ok := db.d.Violation(err); ok && (name == ViolationForeignKey || name == "cluster_facts_cluster") {
		return nil
	}
	return db.fail(ctx, err)
}
