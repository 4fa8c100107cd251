-- Ownership. The installation table holds this kpool's id, made once: the
-- mark kpool puts on every pool it creates at a cloud, so that two kpools
-- sharing a cloud account never touch each other's pools. A cluster's
-- cloud_id names the cloud cluster (its profile says how: subscription,
-- resource group and name; account, region and name; ...) at its endpoint:
-- the unique index makes a second registration of one cloud cluster a
-- conflict, race-safe. NULL (a platform without a cloud identity, a row
-- not backfilled yet) is never a conflict. A cluster may belong to a team;
-- its events carry the team too, so that the team reads its audit trail.
-- credential_grant is the entry of the operator's credential that let the
-- cluster's credential be chosen ("" before grants were recorded): the
-- drivers check it still holds whenever they use the credential. A
-- controller token's scope (platforms, and optionally clusters or teams)
-- bounds the pools it may report on; {} is the unscoped tokens of before.

-- +goose Up
CREATE TABLE installation (id TEXT PRIMARY KEY);
INSERT INTO installation (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
ALTER TABLE clusters ADD COLUMN cloud_id TEXT;
ALTER TABLE clusters ADD COLUMN team TEXT NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN credential_grant TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX clusters_cloud_id ON clusters (cloud_id);
CREATE INDEX clusters_team_order ON clusters (team, created_at, id);
ALTER TABLE events ADD COLUMN team TEXT NOT NULL DEFAULT '';
CREATE INDEX events_team ON events (team, id);
ALTER TABLE tokens ADD COLUMN scope JSON NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE tokens DROP COLUMN scope;
DROP INDEX events_team;
ALTER TABLE events DROP COLUMN team;
DROP INDEX clusters_team_order;
DROP INDEX clusters_cloud_id;
ALTER TABLE clusters DROP COLUMN credential_grant;
ALTER TABLE clusters DROP COLUMN team;
ALTER TABLE clusters DROP COLUMN cloud_id;
DROP TABLE installation;
