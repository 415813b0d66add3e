-- The relay's bookkeeping on the shared outbox: when a row may next be tried
-- (backoff after a failed publish) and the last error, plus the indexes the
-- relay reads by (due rows in id order; older rows of the same key).
ALTER TABLE outbox
    ADD COLUMN next_attempt_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) AFTER attempts,
    ADD COLUMN last_error      VARCHAR(255) NULL AFTER next_attempt_at,
    ADD KEY idx_outbox_due (published_at, next_attempt_at, id),
    ADD KEY idx_outbox_key (msg_key, published_at, id);
