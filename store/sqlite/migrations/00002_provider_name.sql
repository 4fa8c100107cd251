-- A pool's name at its provider, derived at create and never changed, unique
-- among the pools of a cluster (AKS names are 12 characters, so two kpool
-- names can shorten alike; the service picks another then).

-- +goose Up
ALTER TABLE nodepools ADD COLUMN provider_name TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX nodepools_cluster_provider_name ON nodepools (cluster_id, provider_name) WHERE provider_name <> '';

-- +goose Down
DROP INDEX nodepools_cluster_provider_name;
ALTER TABLE nodepools DROP COLUMN provider_name;
