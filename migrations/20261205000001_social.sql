-- The social graph: who follows whom, the consumer's reverse index and
-- counts, blocks, and the record of applied events.
--
-- `follows` is the truth, written by the API in the same transaction as the
-- outbox event that announces the change. One row per ordered pair: a
-- follow after an unfollow updates it, and `version` grows by one with every
-- change, so a consumer can tell an older event from a newer one.
CREATE TABLE follows (
    follower_id  BIGINT UNSIGNED NOT NULL,
    followee_id  BIGINT UNSIGNED NOT NULL,
    status       VARCHAR(16)     NOT NULL,
    version      BIGINT UNSIGNED NOT NULL,
    followed_at  DATETIME(3)     NOT NULL,
    updated_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    PRIMARY KEY (follower_id, followee_id),
    CONSTRAINT ck_follows_status CHECK (status IN ('following', 'canceled')),
    CONSTRAINT ck_follows_pair CHECK (follower_id <> followee_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The follow consumer's projection of `follows`, keyed by the followee (the
-- reverse index that lists a user's followers), with the version of the last
-- event applied to the pair. The Redis ZSets and counts are built from it.
CREATE TABLE followers (
    followee_id  BIGINT UNSIGNED NOT NULL,
    follower_id  BIGINT UNSIGNED NOT NULL,
    status       VARCHAR(16)     NOT NULL,
    version      BIGINT UNSIGNED NOT NULL,
    followed_at  DATETIME(3)     NOT NULL,
    updated_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    PRIMARY KEY (followee_id, follower_id),
    KEY idx_followers_follower (follower_id, followee_id),
    KEY idx_followers_updated (updated_at),
    CONSTRAINT ck_followers_status CHECK (status IN ('following', 'canceled'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Follower and following counts per user, kept by the consumer with the
-- projection and repaired by the count-correction job.
CREATE TABLE follow_counts (
    user_id     BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    followers   BIGINT          NOT NULL DEFAULT 0,
    followings  BIGINT          NOT NULL DEFAULT 0,
    updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- `blocker_id` blocked `blocked_id`: neither follows the other while it stands.
CREATE TABLE blocks (
    blocker_id  BIGINT UNSIGNED NOT NULL,
    blocked_id  BIGINT UNSIGNED NOT NULL,
    created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (blocker_id, blocked_id),
    KEY idx_blocks_blocked (blocked_id, blocker_id),
    CONSTRAINT ck_blocks_pair CHECK (blocker_id <> blocked_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The events each consumer applied, by outbox event id: a redelivery, however
-- late, finds its row here and changes nothing. Rows older than
-- `social.dedup_retention_days` are purged (far beyond any redelivery).
CREATE TABLE consumed_events (
    consumer     VARCHAR(32)     NOT NULL,
    event_id     BIGINT UNSIGNED NOT NULL,
    consumed_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (consumer, event_id),
    KEY idx_consumed_at (consumed_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
