-- Keys the auth rules keep for every instance: `token_mac` signs bearer
-- tokens (made once, by the first process that needs it).
CREATE TABLE auth_secrets (
    name VARCHAR(32) NOT NULL PRIMARY KEY,
    secret VARBINARY(64) NOT NULL
);
