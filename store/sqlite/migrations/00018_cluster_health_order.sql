-- A cluster's pools of one health, in list order: what a list filtered on
-- both a cluster and a health reads as one range (store/page.go), as
-- nodepools_cluster_phase_order serves a cluster and a phase. Without it
-- such a page walked the cluster's pools, or every pool of that health.

-- +goose Up
CREATE INDEX nodepools_cluster_health_order ON nodepools (cluster_id, health, created_at, id);

-- +goose Down
DROP INDEX nodepools_cluster_health_order;
