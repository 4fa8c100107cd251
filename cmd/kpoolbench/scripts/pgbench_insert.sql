INSERT INTO np_ins (id, cluster_id, name, spec, created_at, updated_at)
VALUES (gen_random_uuid(), 'd785d88b-4cfe-4574-8e04-11c1c333208c', 'np-' || gen_random_uuid(),
        '{"replicas":3,"platform":{"type":"GCP","gcp":{"instanceType":"n1-standard-4"}},"release":{"image":"","version":"4.17.0"}}',
        now(), now());
