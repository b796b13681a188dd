-- Version 6: remembered results age in rowid order, so the age index goes (see
-- ../idempotency.rs). A new row takes the next rowid; a key taken over after its retention
-- is forgotten and remembered again, so it takes a new rowid too. The statements that forget
-- rows forget their replies beside them, a rowid range at a time, so the triggers that did it
-- once per row go as well.
DROP INDEX IF EXISTS idempotency_by_key_age;
DROP TRIGGER IF EXISTS idempotency_forgotten;
DROP TRIGGER IF EXISTS idempotency_taken_over;
