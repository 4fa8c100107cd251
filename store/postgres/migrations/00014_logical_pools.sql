-- logical_pools are the logical pools of issue 35: a placement name, a
-- node count and a member template with fallbacks, whose controller makes
-- the member pools. Rows are removed when a logical pool is deleted, so a
-- name is unique among live ones; a cluster's go with it.

-- +goose Up
CREATE TABLE logical_pools (
    id                 UUID PRIMARY KEY,
    cluster_id         UUID NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    created_by         TEXT NOT NULL,
    generation         BIGINT NOT NULL,
    resource_version   TEXT NOT NULL,
    spec               JSON NOT NULL,
    status             JSON NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    deletion_timestamp TIMESTAMPTZ
);
CREATE UNIQUE INDEX logical_pools_cluster_name ON logical_pools (cluster_id, name);
CREATE INDEX logical_pools_order ON logical_pools (created_at, id);
CREATE INDEX logical_pools_cluster_order ON logical_pools (cluster_id, created_at, id);

-- +goose Down
DROP TABLE logical_pools;
