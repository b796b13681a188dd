-- Version 4: the `idempotency` table, each API key's remembered results of writes sent with an
-- idempotency key (see `crate::idempotency`), keyed by account, API key and key, without
-- rowids, and its index by API key and age (each key's expiry and bound). Version 5 reshapes it.
CREATE TABLE IF NOT EXISTS idempotency (
    key_id TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    account TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (account, key_id, idem_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_by_key_age ON idempotency (account, key_id, created_at);
