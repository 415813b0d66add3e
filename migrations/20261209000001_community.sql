-- Ordinary coupons, notes with likes.
--
-- A voucher is a seckill voucher (a `seckill_vouchers` row: a sale window,
-- one per user) or an ordinary coupon (an `ordinary_vouchers` row: claimed
-- any time, as often as `limits.claims` lets a shopper). `kind` says which.
ALTER TABLE vouchers
    ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'seckill',
    ADD CONSTRAINT ck_vouchers_kind CHECK (kind IN ('seckill', 'ordinary'));

-- An ordinary coupon's units: `stock` is the truth, taken by the claim's
-- conditional UPDATE; Redis holds a counter in front of it.
CREATE TABLE ordinary_vouchers (
    voucher_id     BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    initial_stock  INT UNSIGNED    NOT NULL,
    stock          INT             NOT NULL,
    CONSTRAINT fk_ordinary_voucher FOREIGN KEY (voucher_id) REFERENCES vouchers (id),
    CONSTRAINT ck_ordinary_stock CHECK (stock >= 0 AND stock <= initial_stock)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- One row per unit claimed, in the same transaction as the stock it took.
CREATE TABLE voucher_claims (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    voucher_id  BIGINT UNSIGNED NOT NULL,
    user_id     BIGINT UNSIGNED NOT NULL,
    claimed_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    KEY idx_claims_user (user_id, id),
    CONSTRAINT fk_claims_voucher FOREIGN KEY (voucher_id) REFERENCES vouchers (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- A shopper's note about a shop; `images` is a JSON array of up to 9 URLs.
-- `liked` moves by exactly one per like or unlike that changed `note_likes`,
-- in the same transaction.
CREATE TABLE notes (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id     BIGINT UNSIGNED NOT NULL,
    shop_id     BIGINT UNSIGNED NOT NULL,
    title       VARCHAR(128)    NOT NULL,
    content     VARCHAR(4096)   NOT NULL,
    images      VARCHAR(5000)   NOT NULL DEFAULT '[]',
    liked       INT             NOT NULL DEFAULT 0,
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    KEY idx_notes_shop (shop_id, id),
    KEY idx_notes_user (user_id, id),
    KEY idx_notes_liked (liked, id),
    CONSTRAINT fk_notes_shop FOREIGN KEY (shop_id) REFERENCES shops (id),
    CONSTRAINT ck_notes_liked CHECK (liked >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Who likes which note, since when: what a note's likes ZSet is rebuilt from.
CREATE TABLE note_likes (
    note_id   BIGINT UNSIGNED NOT NULL,
    user_id   BIGINT UNSIGNED NOT NULL,
    liked_at  DATETIME(3)     NOT NULL,
    PRIMARY KEY (note_id, user_id),
    CONSTRAINT fk_note_likes_note FOREIGN KEY (note_id) REFERENCES notes (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The count correction's sample of a user's newest follow rows, either way,
-- read under the user's count lock: by index, not by sorting every row.
ALTER TABLE followers
    ADD KEY idx_followers_followee_time (followee_id, status, followed_at),
    ADD KEY idx_followers_follower_time (follower_id, status, followed_at);
