-- kubeconfig_grant is the entry of the operator's kubeconfig credential
-- (spec.kubeconfig) that let it be chosen, as credential_grant is for
-- spec.credential: kpool checks it still holds whenever it reaches the
-- cluster's Kubernetes API through it. "" when the cluster names none.

-- +goose Up
ALTER TABLE clusters ADD COLUMN kubeconfig_grant TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE clusters DROP COLUMN kubeconfig_grant;
