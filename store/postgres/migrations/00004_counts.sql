-- Pool counts per cluster, phase and health, kept by triggers in the same
-- transaction as every insert, delete and phase change, so that a list's
-- total is a sum over a few rows instead of a count of the pools. Each
-- connection adds to its own shard of a counter, so that creates into one
-- cluster do not queue on one counter row. And the rule that a cluster being
-- deleted takes no new pool, kept by the database so that no create can slip
-- in beside the delete.

-- +goose Up
CREATE TABLE nodepool_counts (
    cluster_id UUID NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    phase      TEXT NOT NULL,
    health     TEXT NOT NULL,
    shard      SMALLINT NOT NULL,
    n          BIGINT NOT NULL,
    PRIMARY KEY (cluster_id, phase, health, shard)
);
INSERT INTO nodepool_counts (cluster_id, phase, health, shard, n)
    SELECT cluster_id, phase, health, 0, count(*) FROM nodepools GROUP BY cluster_id, phase, health;

-- Inserts and deletes are counted per statement, from its transition table:
-- a statement of many rows (a bulk load, a force delete) adds to each counter
-- once, where a row trigger would stack a new version of one row per pool.
-- +goose StatementBegin
CREATE FUNCTION kpool_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO nodepool_counts (cluster_id, phase, health, shard, n)
        SELECT cluster_id, phase, health, pg_backend_pid() % 64, count(*) FROM inserted
        GROUP BY cluster_id, phase, health ORDER BY cluster_id, phase, health
    ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = nodepool_counts.n + excluded.n;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION kpool_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO nodepool_counts (cluster_id, phase, health, shard, n)
        SELECT cluster_id, phase, health, pg_backend_pid() % 64, -count(*) FROM deleted
        GROUP BY cluster_id, phase, health ORDER BY cluster_id, phase, health
    ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = nodepool_counts.n + excluded.n;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER nodepools_count_insert AFTER INSERT ON nodepools
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION kpool_count_inserted();
CREATE TRIGGER nodepools_count_delete AFTER DELETE ON nodepools
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION kpool_count_deleted();

-- A phase change moves a pool between counters. Each connection adds to its
-- own shard, so that writers do not queue on one counter row; the lower key
-- goes first, so that two transactions moving pools between the same two
-- phases cannot deadlock. (Row-level, so that it fires only when the phase
-- or health changes: a statement trigger with transition tables cannot be
-- limited to columns.)
-- +goose StatementBegin
CREATE FUNCTION kpool_count_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s SMALLINT := pg_backend_pid() % 64;
BEGIN
    IF (NEW.phase, NEW.health) < (OLD.phase, OLD.health) THEN
        INSERT INTO nodepool_counts VALUES (NEW.cluster_id, NEW.phase, NEW.health, s, 1)
        ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = nodepool_counts.n + 1;
        INSERT INTO nodepool_counts VALUES (OLD.cluster_id, OLD.phase, OLD.health, s, -1)
        ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = nodepool_counts.n - 1;
    ELSE
        INSERT INTO nodepool_counts VALUES (OLD.cluster_id, OLD.phase, OLD.health, s, -1)
        ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = nodepool_counts.n - 1;
        INSERT INTO nodepool_counts VALUES (NEW.cluster_id, NEW.phase, NEW.health, s, 1)
        ON CONFLICT (cluster_id, phase, health, shard) DO UPDATE SET n = nodepool_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER nodepools_count_update AFTER UPDATE OF phase, health ON nodepools
    FOR EACH ROW WHEN (OLD.phase IS DISTINCT FROM NEW.phase OR OLD.health IS DISTINCT FROM NEW.health)
    EXECUTE FUNCTION kpool_count_moved();

-- +goose StatementBegin
CREATE FUNCTION kpool_nodepool_cluster_live() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    gen      BIGINT;
    deleting TIMESTAMPTZ;
    want     TEXT := current_setting('kpool.cluster_generation', true);
BEGIN
    -- The lock waits for a delete of the cluster that holds its row.
    SELECT generation, deletion_timestamp INTO gen, deleting FROM clusters WHERE id = NEW.cluster_id FOR KEY SHARE;
    IF NOT FOUND THEN
        RETURN NEW; -- the foreign key says so
    END IF;
    IF deleting IS NOT NULL THEN
        RAISE EXCEPTION 'cluster % is being deleted', NEW.cluster_id
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'kpool_cluster_deleting';
    END IF;
    -- The writer checked the pool against the cluster at this generation.
    IF want IS NOT NULL AND want <> '' AND want::BIGINT <> gen THEN
        RAISE EXCEPTION 'cluster % is at generation %, not %', NEW.cluster_id, gen, want
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'kpool_cluster_changed';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER nodepools_cluster_live BEFORE INSERT ON nodepools
    FOR EACH ROW EXECUTE FUNCTION kpool_nodepool_cluster_live();

-- kpool_one_row fails the transaction unless n is 1: a pipelined UPDATE that
-- found its row changed must stop the COMMIT sent behind it.
-- +goose StatementBegin
CREATE FUNCTION kpool_one_row(n BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN
    IF n <> 1 THEN
        RAISE EXCEPTION 'the row has been modified (% rows matched)', n
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'kpool_stale';
    END IF;
    RETURN n;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION kpool_one_row;
DROP TRIGGER nodepools_cluster_live ON nodepools;
DROP FUNCTION kpool_nodepool_cluster_live;
DROP TRIGGER nodepools_count_update ON nodepools;
DROP TRIGGER nodepools_count_delete ON nodepools;
DROP TRIGGER nodepools_count_insert ON nodepools;
DROP FUNCTION kpool_count_moved;
DROP FUNCTION kpool_count_deleted;
DROP FUNCTION kpool_count_inserted;
DROP TABLE nodepool_counts;
