-- Leases for leader election: one kpool process at a time holds a lease
-- (the controllers' lease) and renews it; another takes it once it expires.

-- +goose Up
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE leases;
