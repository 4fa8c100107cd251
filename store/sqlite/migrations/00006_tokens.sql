-- API tokens: only the SHA-256 of each secret is kept. controller_names is
-- a JSON array of the names a controller token may report under.

-- +goose Up
CREATE TABLE tokens (
    id               TEXT PRIMARY KEY,
    token_hash       TEXT NOT NULL UNIQUE,
    user_email       TEXT NOT NULL,
    role             TEXT NOT NULL,
    controller_names TEXT NOT NULL DEFAULT '[]',
    created_at       TEXT NOT NULL, -- fixed-width UTC text, as every time here
    created_by       TEXT NOT NULL DEFAULT '',
    expires_at       TEXT,
    last_used_at     TEXT,
    revoked_at       TEXT
);

-- +goose Down
DROP TABLE tokens;
