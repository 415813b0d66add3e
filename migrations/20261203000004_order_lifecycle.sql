-- The order lifecycle: payments, closing, refunds and the reconciler.
--
-- One live order per buyer and voucher: `live_buyer` is the user id while the
-- order is unpaid or paid and NULL once it is closed or refunded (a unique
-- key allows many NULLs), so a buyer whose order was closed may buy again
-- while two live orders of one buyer stay impossible.
ALTER TABLE orders
    ADD COLUMN live_buyer BIGINT UNSIGNED
        AS (IF(status IN ('unpaid', 'paid'), user_id, NULL)) STORED AFTER status,
    DROP KEY uk_orders_user_voucher,
    ADD UNIQUE KEY uk_orders_live_buyer (voucher_id, live_buyer),
    ADD KEY idx_orders_user_voucher (user_id, voucher_id);

-- One row per payment the provider reported, keyed by its transaction id, so
-- a callback delivered twice changes nothing the second time. `status`:
-- failed (the provider could not charge), paid (it paid the order),
-- refunding (it lost to a close or another payment; the money goes back),
-- refunded.
CREATE TABLE payments (
    txn_id      VARCHAR(64)     NOT NULL PRIMARY KEY,
    order_id    BIGINT UNSIGNED NOT NULL,
    amount      BIGINT UNSIGNED NOT NULL,
    status      VARCHAR(16)     NOT NULL,
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    KEY idx_payments_order (order_id),
    KEY idx_payments_status (status, updated_at),
    CONSTRAINT ck_payments_status CHECK (status IN ('failed', 'paid', 'refunding', 'refunded'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The last report of the reconciler for each voucher (JSON).
CREATE TABLE reconcile_reports (
    voucher_id  BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    ran_at      DATETIME(3)     NOT NULL,
    report      MEDIUMTEXT      NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
