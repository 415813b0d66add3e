-- Two secondary indexes of `orders` that others already serve, dropped so
-- that every stored order writes four index entries, not six:
-- - idx_orders_voucher (voucher_id) is the leading column of
--   uk_orders_live_buyer (voucher_id, live_buyer), which answers the same
--   per-voucher reads;
-- - idx_orders_user_voucher (user_id, voucher_id): idx_orders_user_id
--   (user_id, id) finds a buyer's orders, and a buyer holds few, so the
--   voucher is a filter over a handful of entries.
ALTER TABLE orders
    DROP KEY idx_orders_voucher,
    DROP KEY idx_orders_user_voucher;
