-- Specs, statuses and reports as json (their text as written) rather than
-- jsonb: kpool never queries inside them, and reads send them on as they are
-- stored, which jsonb would have to re-serialise (and reorder) every time.

-- +goose Up
ALTER TABLE clusters ALTER COLUMN spec TYPE json USING spec::json, ALTER COLUMN status TYPE json USING status::json;
ALTER TABLE nodepools ALTER COLUMN spec TYPE json USING spec::json, ALTER COLUMN status TYPE json USING status::json;
ALTER TABLE nodepool_controller_status ALTER COLUMN conditions TYPE json USING conditions::json,
    ALTER COLUMN metadata TYPE json USING metadata::json;

-- +goose Down
ALTER TABLE nodepool_controller_status ALTER COLUMN conditions TYPE jsonb USING conditions::jsonb,
    ALTER COLUMN metadata TYPE jsonb USING metadata::jsonb;
ALTER TABLE nodepools ALTER COLUMN spec TYPE jsonb USING spec::jsonb, ALTER COLUMN status TYPE jsonb USING status::jsonb;
ALTER TABLE clusters ALTER COLUMN spec TYPE jsonb USING spec::jsonb, ALTER COLUMN status TYPE jsonb USING status::jsonb;
