-- Where the binlog relay (outbox.relay = "binlog") has published up to: the
-- binlog file and the offset just past the last transaction whose outbox rows
-- the broker stored. Written in the same transaction that marks those rows
-- published; one row per relay kind.
CREATE TABLE outbox_relay_position (
    relay      VARCHAR(16)     NOT NULL PRIMARY KEY,
    file       VARCHAR(255)    NOT NULL,
    pos        BIGINT UNSIGNED NOT NULL,
    stored_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
