-- The first kpool schema: clusters, node pools, controller reports and the
-- events outbox. Times are UTC text of fixed width, so text order is time order.

-- +goose Up
CREATE TABLE clusters (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    created_by         TEXT NOT NULL,
    generation         INTEGER NOT NULL,
    resource_version   TEXT NOT NULL,
    spec               TEXT NOT NULL,
    status             TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    deletion_timestamp TEXT
);
-- Rows are removed when an object is deleted, so uniqueness is among live objects.
CREATE UNIQUE INDEX clusters_owner_name ON clusters (created_by, name);
CREATE INDEX clusters_order ON clusters (created_at, id);
CREATE INDEX clusters_owner_order ON clusters (created_by, created_at, id);

CREATE TABLE nodepools (
    id                 TEXT PRIMARY KEY,
    cluster_id         TEXT NOT NULL REFERENCES clusters (id) ON DELETE RESTRICT,
    name               TEXT NOT NULL,
    created_by         TEXT NOT NULL,
    generation         INTEGER NOT NULL,
    resource_version   TEXT NOT NULL,
    spec               TEXT NOT NULL,
    status             TEXT NOT NULL,
    phase              TEXT NOT NULL,
    health             TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    deletion_timestamp TEXT
);
CREATE UNIQUE INDEX nodepools_cluster_name ON nodepools (cluster_id, name);
CREATE INDEX nodepools_order ON nodepools (created_at, id);
CREATE INDEX nodepools_cluster_order ON nodepools (cluster_id, created_at, id);
CREATE INDEX nodepools_phase_order ON nodepools (phase, created_at, id);
CREATE INDEX nodepools_health_order ON nodepools (health, created_at, id);

CREATE TABLE nodepool_controller_status (
    nodepool_id         TEXT NOT NULL REFERENCES nodepools (id) ON DELETE CASCADE,
    controller_name     TEXT NOT NULL,
    observed_generation INTEGER NOT NULL,
    conditions          TEXT NOT NULL,
    metadata            TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    PRIMARY KEY (nodepool_id, controller_name)
);

CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT NOT NULL,
    object_id  TEXT NOT NULL,
    cluster_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    actor      TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX events_object ON events (object_id, id);

-- +goose Down
DROP TABLE events;
DROP TABLE nodepool_controller_status;
DROP TABLE nodepools;
DROP TABLE clusters;
