-- Version 3: where nodes sharing the database meet. The change log, readable in order per
-- account; the live sockets' tickets, good on any node; allowance counters by key, which each
-- node reads back to learn what the others counted.
CREATE TABLE IF NOT EXISTS changes (
    account TEXT NOT NULL,
    rev BIGINT NOT NULL,
    stamp BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (account, rev)
);
CREATE TABLE IF NOT EXISTS tickets (
    account TEXT NOT NULL,
    digest BYTEA NOT NULL,
    key_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (account, digest)
);
CREATE INDEX IF NOT EXISTS tickets_by_digest ON tickets (digest);
CREATE INDEX IF NOT EXISTS allowance_by_key ON allowance (key_id);
