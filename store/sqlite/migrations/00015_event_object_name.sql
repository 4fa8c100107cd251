-- The name of the object an event is about (a pool's, cluster's, logical
-- pool's or token's) when the event was written, so that the audit trail
-- reads by name. Events written before it have '' (readers show the id).

-- +goose Up
ALTER TABLE events ADD COLUMN object_name TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN object_name;
