-- The pgbench ceilings' tables: np_ins takes one nodepool-shaped row per
-- insert; np_sel holds 100,000 such rows for primary-key selects. It runs as
-- one implicit transaction, so VACUUM ANALYZE np_sel follows on its own.
CREATE TABLE np_ins (
  id uuid PRIMARY KEY,
  cluster_id uuid NOT NULL,
  name varchar(255) NOT NULL,
  spec jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (cluster_id, name)
);
CREATE TABLE np_sel (LIKE np_ins INCLUDING ALL);
INSERT INTO np_sel (id, cluster_id, name, spec, created_at, updated_at)
SELECT ('00000000-0000-0000-0000-' || lpad(g::text, 12, '0'))::uuid,
       'd785d88b-4cfe-4574-8e04-11c1c333208c', 'np-' || g,
       '{"replicas":3,"platform":{"type":"GCP","gcp":{"instanceType":"n1-standard-4"}},"release":{"image":"","version":"4.17.0"}}',
       now(), now()
FROM generate_series(1, 100000) g;
