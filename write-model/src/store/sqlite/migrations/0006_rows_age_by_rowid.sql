-- Version 6: remembered results age in rowid order, so the age index goes (see
-- ../idempotency.rs). A new row takes the next rowid; a key taken over after its retention
-- takes a new rowid too (the upsert sets it), so its old reply, under the old rowid, goes.
DROP INDEX IF EXISTS idempotency_by_key_age;
DROP TRIGGER IF EXISTS idempotency_taken_over;
CREATE TRIGGER idempotency_taken_over AFTER UPDATE ON idempotency
BEGIN
    DELETE FROM idempotency_replies WHERE id = OLD.id;
END;
