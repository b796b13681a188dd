-- Version 5: the `idempotency` table gains rowids (the lookup through a unique index that
-- leads with the account, as every table's key does), and first replies a table of their own,
-- `idempotency_replies`, keyed by their row's rowid (see ../idempotency.rs for why). Rows
-- remembered before keep their results: a reply among them stays in `result`, where the
-- lookup still reads it. Triggers keep the two tables in step: a row forgotten, or taken over
-- by a new request under an expired key, takes its reply along.
--
-- Version 4 made the table, so it is here to move; its indexes go with it (the age index
-- first, as the new table's takes its name).
ALTER TABLE idempotency RENAME TO idempotency_without_rowid;
DROP INDEX IF EXISTS idempotency_by_key_age;
CREATE TABLE idempotency (
    id INTEGER PRIMARY KEY,
    key_id TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    account TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    result TEXT NOT NULL
);
INSERT INTO idempotency (key_id, idem_key, account, fingerprint, created_at, result)
    SELECT key_id, idem_key, account, fingerprint, created_at, result
    FROM idempotency_without_rowid ORDER BY created_at;
DROP TABLE idempotency_without_rowid;
CREATE UNIQUE INDEX idempotency_by_request ON idempotency (account, key_id, idem_key);
CREATE INDEX idempotency_by_key_age ON idempotency (account, key_id, created_at);
CREATE TABLE idempotency_replies (
    id INTEGER PRIMARY KEY,
    status INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TRIGGER idempotency_forgotten AFTER DELETE ON idempotency
BEGIN
    DELETE FROM idempotency_replies WHERE id = OLD.id;
END;
CREATE TRIGGER idempotency_taken_over AFTER UPDATE ON idempotency
BEGIN
    DELETE FROM idempotency_replies WHERE id = NEW.id;
END;
