\set k random(1, 100000)
SELECT id, cluster_id, name, spec, created_at, updated_at FROM np_sel
WHERE id = ('00000000-0000-0000-0000-' || lpad(:k::text, 12, '0'))::uuid;
