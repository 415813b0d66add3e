-- A hot seckill voucher's stock split into buckets, each a sale of its own
-- in Redis under its own hash tag (see core/src/vouchers/buckets.rs).
--
-- `buckets` is fixed when the voucher is created. An order keeps the bucket
-- its unit was reserved in: its release gives the unit back there, and the
-- reconciler checks and rebuilds each bucket from the orders that name it.
ALTER TABLE seckill_vouchers
    ADD COLUMN buckets SMALLINT UNSIGNED NOT NULL DEFAULT 1,
    ADD CONSTRAINT ck_seckill_buckets CHECK (buckets BETWEEN 1 AND 64);

ALTER TABLE orders
    ADD COLUMN bucket SMALLINT UNSIGNED NOT NULL DEFAULT 0;
