package store

import (
	"context"

	"github.com/kpool/kpool"
)

// NodePoolCounts returns the pools per cluster and phase that f selects,
// summed over the counters the schema's triggers keep (nodepool_counts):
// its cost follows the number of clusters, never the number of pools, so
// the dashboard's fleet view reads it instead of the pools.
func (db *DB) NodePoolCounts(ctx context.Context, f kpool.NodePoolFilter) ([]kpool.PoolCount, error) {
	var w where
	visible(&w, f.Owner, f.Teams)
	if f.ClusterID != "" {
		w.add("k.cluster_id = ?", f.ClusterID)
	}
	q := `SELECT k.cluster_id, k.phase, sum(k.n) FROM nodepool_counts k`
	if f.Owner != "" {
		q += ` JOIN clusters c ON c.id = k.cluster_id`
	}
	q += w.String() + ` GROUP BY k.cluster_id, k.phase HAVING sum(k.n) > 0 ORDER BY k.cluster_id, k.phase`
	out := []kpool.PoolCount{}
	err := db.db.Read(ctx, db.read(q, w.args, func(s Scanner) error {
		var c kpool.PoolCount
		var phase string
		var n int64
		if err := s.Scan(&c.ClusterID, &phase, &n); err != nil {
			return err
		}
		c.Phase, c.N = kpool.Phase(phase), int(n)
		out = append(out, c)
		return nil
	}))
	if err != nil {
		return nil, db.fail(ctx, err)
	}
	return out, nil
}
