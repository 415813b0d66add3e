-- The parking lot says what each parked message was: its kind of refusal,
-- the order it carried (if any), whether that order's shopper had been told
-- 202 (so an operator can alert on accepted orders that were not stored), and
-- when an operator replayed it. A message parked again on a redelivery is
-- one row (unique topic and message id).
ALTER TABLE parked_messages
    ADD COLUMN kind        VARCHAR(32)     NOT NULL DEFAULT '' AFTER msg_id,
    ADD COLUMN order_id    BIGINT UNSIGNED NULL AFTER kind,
    ADD COLUMN accepted    BOOLEAN         NOT NULL DEFAULT FALSE AFTER order_id,
    ADD COLUMN replayed_at DATETIME(3)     NULL,
    ADD UNIQUE KEY uk_parked_msg (topic, msg_id),
    ADD KEY idx_parked_order (order_id),
    ADD KEY idx_parked_open (replayed_at, id);
