-- Version 2: what a key may do (`access`: `full` or `read`) and when it stops working
-- (`expires_at`); every existing key keeps full access and never expires.
ALTER TABLE keys ADD COLUMN IF NOT EXISTS access TEXT NOT NULL DEFAULT 'full';
ALTER TABLE keys ADD COLUMN IF NOT EXISTS expires_at BIGINT;
