-- Payments that match, refunds that finish, a fair pay window.
--
-- A payment row is written when the owner starts paying (`started`, with the
-- transaction id, the order and the amount asked), so a callback is applied
-- only to a payment that was started, for that order and that amount.
-- `refund_move` says what a `refunding` payment undoes once the provider
-- confirms the refund: `refund_paid` (an admin closed the order it paid) or
-- `refund_closed` (it lost to a close or to another payment); the worker's
-- refund job finishes every `refunding` row, so a crash between the steps of
-- a refund never leaves money taken.
ALTER TABLE payments
    DROP CONSTRAINT ck_payments_status,
    ADD COLUMN refund_move VARCHAR(16) NULL AFTER status,
    ADD CONSTRAINT ck_payments_status CHECK (status IN ('started', 'failed', 'paid', 'refunding', 'refunded')),
    ADD CONSTRAINT ck_payments_refund_move CHECK (refund_move IS NULL OR refund_move IN ('refund_paid', 'refund_closed'));

-- An unpaid order's payment window runs from when it was stored, not from
-- when its unit was reserved: an order stored after an outage (or replayed
-- from the parked table) still gives its shopper the whole window.
ALTER TABLE orders
    ADD COLUMN stored_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) AFTER created_at;
UPDATE orders SET stored_at = created_at;
ALTER TABLE orders
    DROP KEY idx_orders_status_created,
    ADD KEY idx_orders_status_stored (status, stored_at);
