-- What kpool learnt of each cluster from its provider (kpool.ClusterFacts:
-- versions, zones, the machine types its region offers), as JSON, for
-- checking pools before the provider sees them. A table of its own: a
-- catalogue is tens of kilobytes, which lists of clusters must not carry.

-- +goose Up
CREATE TABLE cluster_facts (
    cluster_id UUID PRIMARY KEY CONSTRAINT cluster_facts_cluster REFERENCES clusters (id) ON DELETE CASCADE,
    facts      JSONB NOT NULL,
    learned_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE cluster_facts;
