-- A cluster's pools in one phase, in list order: what the dashboard's fleet
-- view reads to name a cluster's Failed and Degraded pools, and what a list
-- filtered on both a cluster and a phase reads, a few rows at any size.
-- Without it a cluster's first Failed pools were found by walking every
-- Failed pool of the fleet, or every pool of the cluster.

-- +goose Up
CREATE INDEX nodepools_cluster_phase_order ON nodepools (cluster_id, phase, created_at, id);

-- +goose Down
DROP INDEX nodepools_cluster_phase_order;
