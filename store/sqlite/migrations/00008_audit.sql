-- The events outbox is also the audit trail: who owns the cluster (whose
-- users may read the event), the generation before the write, the API
-- request that made it and a short account of what changed. Old events get
-- their cluster's owner where the cluster still exists; the others stay
-- visible to admins only.

-- +goose Up
ALTER TABLE events ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN generation_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN detail TEXT NOT NULL DEFAULT '';
UPDATE events SET owner = coalesce((SELECT c.created_by FROM clusters c WHERE c.id = events.cluster_id), '');
CREATE INDEX events_cluster ON events (cluster_id, id);
CREATE INDEX events_owner ON events (owner, id);

-- +goose Down
DROP INDEX events_owner;
DROP INDEX events_cluster;
ALTER TABLE events DROP COLUMN detail;
ALTER TABLE events DROP COLUMN request_id;
ALTER TABLE events DROP COLUMN generation_before;
ALTER TABLE events DROP COLUMN owner;
