-- Pool counts per cluster, phase and health, kept by triggers in the same
-- transaction as every insert, delete and phase change, so that a list's
-- total is a sum over a few rows instead of a count of the pools. And the
-- rule that a cluster being deleted takes no new pool, kept by the database
-- so that no create can slip in beside the delete.

-- +goose Up
CREATE TABLE nodepool_counts (
    cluster_id TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    phase      TEXT NOT NULL,
    health     TEXT NOT NULL,
    shard      INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, phase, health, shard)
);
INSERT INTO nodepool_counts (cluster_id, phase, health, shard, n)
    SELECT cluster_id, phase, health, 0, count(*) FROM nodepools GROUP BY cluster_id, phase, health;

-- +goose StatementBegin
CREATE TRIGGER nodepools_count_insert AFTER INSERT ON nodepools BEGIN
    INSERT INTO nodepool_counts (cluster_id, phase, health, shard, n) VALUES (NEW.cluster_id, NEW.phase, NEW.health, 0, 1)
    ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER nodepools_count_delete AFTER DELETE ON nodepools BEGIN
    UPDATE nodepool_counts SET n = n - 1
    WHERE cluster_id = OLD.cluster_id AND phase = OLD.phase AND health = OLD.health AND shard = 0;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER nodepools_count_update AFTER UPDATE OF phase, health ON nodepools
WHEN OLD.phase <> NEW.phase OR OLD.health <> NEW.health BEGIN
    UPDATE nodepool_counts SET n = n - 1
    WHERE cluster_id = OLD.cluster_id AND phase = OLD.phase AND health = OLD.health AND shard = 0;
    INSERT INTO nodepool_counts (cluster_id, phase, health, shard, n) VALUES (NEW.cluster_id, NEW.phase, NEW.health, 0, 1)
    ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER nodepools_cluster_live BEFORE INSERT ON nodepools
WHEN (SELECT deletion_timestamp FROM clusters WHERE id = NEW.cluster_id) IS NOT NULL BEGIN
    SELECT RAISE(ABORT, 'kpool_cluster_deleting: the cluster is being deleted');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER nodepools_cluster_live;
DROP TRIGGER nodepools_count_update;
DROP TRIGGER nodepools_count_delete;
DROP TRIGGER nodepools_count_insert;
DROP TABLE nodepool_counts;
