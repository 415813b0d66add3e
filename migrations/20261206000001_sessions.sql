-- Sessions: MySQL is the truth, Redis and each API's memory serve them.
--
-- A row per bearer token, keyed by the token's SHA-256 (the token itself is
-- never stored). `expires_at` slides forward while the session is used (at
-- most once per half token TTL, see core/src/auth); a logout deletes the
-- row. A user's role is read from `users` with the session, so a role
-- change needs no rewrite here.
CREATE TABLE sessions (
    token_hash  CHAR(64)        NOT NULL,
    user_id     BIGINT UNSIGNED NOT NULL,
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    expires_at  DATETIME(3)     NOT NULL,
    PRIMARY KEY (token_hash),
    KEY idx_sessions_user (user_id, expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
