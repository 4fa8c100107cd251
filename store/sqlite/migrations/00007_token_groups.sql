-- The groups an API token's holder is in (kpool token create --group), a
-- JSON array of lower-cased names like controller_names: the operator's
-- credentials may be granted to a group.

-- +goose Up
ALTER TABLE tokens ADD COLUMN group_names TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE tokens DROP COLUMN group_names;
