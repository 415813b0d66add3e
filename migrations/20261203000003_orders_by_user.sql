-- A user's orders, newest first, by cursor: (user_id, id).
ALTER TABLE orders ADD KEY idx_orders_user_id (user_id, id);
