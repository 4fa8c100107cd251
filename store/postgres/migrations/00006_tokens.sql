-- API tokens: only the SHA-256 of each secret is kept. controller_names is
-- a JSON array of the names a controller token may report under.

-- +goose Up
CREATE TABLE tokens (
    id               TEXT PRIMARY KEY,
    token_hash       TEXT NOT NULL UNIQUE,
    user_email       TEXT NOT NULL,
    role             TEXT NOT NULL,
    controller_names JSON NOT NULL DEFAULT '[]',
    created_at       TIMESTAMPTZ NOT NULL,
    created_by       TEXT NOT NULL DEFAULT '',
    expires_at       TIMESTAMPTZ,
    last_used_at     TIMESTAMPTZ,
    revoked_at       TIMESTAMPTZ
);

-- +goose Down
DROP TABLE tokens;
