-- CityHub schema: users, shops, vouchers with their seckill part, orders, the
-- transactional outbox and the parking lot for messages no consumer can use.
-- Money is stored in cents; times are UTC with millisecond precision.

CREATE TABLE users (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    phone       VARCHAR(20)     NOT NULL,
    nick_name   VARCHAR(64)     NOT NULL DEFAULT '',
    role        VARCHAR(16)     NOT NULL DEFAULT 'shopper',
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    UNIQUE KEY uk_users_phone (phone),
    CONSTRAINT ck_users_role CHECK (role IN ('shopper', 'admin'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE shops (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name        VARCHAR(128)    NOT NULL,
    type_id     BIGINT UNSIGNED NOT NULL DEFAULT 0,
    address     VARCHAR(255)    NOT NULL DEFAULT '',
    x           DOUBLE          NULL,
    y           DOUBLE          NULL,
    avg_price   BIGINT UNSIGNED NOT NULL DEFAULT 0,
    score       INT UNSIGNED    NOT NULL DEFAULT 0,
    open_hours  VARCHAR(32)     NOT NULL DEFAULT '',
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE vouchers (
    id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    shop_id       BIGINT UNSIGNED NOT NULL,
    title         VARCHAR(255)    NOT NULL,
    sub_title     VARCHAR(255)    NOT NULL DEFAULT '',
    rules         VARCHAR(1024)   NOT NULL DEFAULT '',
    pay_value     BIGINT UNSIGNED NOT NULL,
    actual_value  BIGINT UNSIGNED NOT NULL,
    created_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    updated_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    KEY idx_vouchers_shop (shop_id),
    CONSTRAINT fk_vouchers_shop FOREIGN KEY (shop_id) REFERENCES shops (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE seckill_vouchers (
    voucher_id     BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    initial_stock  INT UNSIGNED    NOT NULL,
    stock          INT             NOT NULL,
    begin_time     DATETIME(3)     NOT NULL,
    end_time       DATETIME(3)     NOT NULL,
    CONSTRAINT fk_seckill_voucher FOREIGN KEY (voucher_id) REFERENCES vouchers (id),
    CONSTRAINT ck_seckill_stock CHECK (stock >= 0 AND stock <= initial_stock),
    CONSTRAINT ck_seckill_window CHECK (begin_time < end_time)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- `id` is the order id the API hands out (a Snowflake-style id), so a
-- redelivered order message hits the primary key and inserts nothing.
CREATE TABLE orders (
    id          BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    user_id     BIGINT UNSIGNED NOT NULL,
    voucher_id  BIGINT UNSIGNED NOT NULL,
    status      VARCHAR(16)     NOT NULL DEFAULT 'unpaid',
    pay_amount  BIGINT UNSIGNED NOT NULL,
    created_at  DATETIME(3)     NOT NULL,
    paid_at     DATETIME(3)     NULL,
    closed_at   DATETIME(3)     NULL,
    updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    UNIQUE KEY uk_orders_user_voucher (user_id, voucher_id),
    KEY idx_orders_voucher (voucher_id),
    KEY idx_orders_status_created (status, created_at),
    CONSTRAINT ck_orders_status CHECK (status IN ('unpaid', 'paid', 'closed', 'refunded'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Transactional outbox: a row is written in the same transaction as the change
-- it announces; a relay publishes unpublished rows in id order.
CREATE TABLE outbox (
    id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    topic         VARCHAR(127)    NOT NULL,
    tag           VARCHAR(64)     NOT NULL DEFAULT '',
    msg_key       VARCHAR(128)    NOT NULL DEFAULT '',
    payload       MEDIUMTEXT      NOT NULL,
    attempts      INT UNSIGNED    NOT NULL DEFAULT 0,
    created_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    published_at  DATETIME(3)     NULL,
    KEY idx_outbox_unpublished (published_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Messages a consumer could not use (unparsable, or refused by a rule): kept
-- for an operator instead of blocking or silently dropping them.
CREATE TABLE parked_messages (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    topic       VARCHAR(127)    NOT NULL,
    msg_id      VARCHAR(128)    NOT NULL,
    reason      VARCHAR(255)    NOT NULL,
    body        MEDIUMBLOB      NOT NULL,
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    KEY idx_parked_topic (topic, created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
