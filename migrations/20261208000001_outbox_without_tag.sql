-- The outbox's `tag` column was never written nor read (events are routed by
-- topic and key only).
ALTER TABLE outbox DROP COLUMN tag;
