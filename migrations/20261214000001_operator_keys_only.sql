-- Operators act with operator keys only (`operator_keys`): a phone's
-- account is a shopper's, always, so the role column goes.
ALTER TABLE users DROP CONSTRAINT ck_users_role;
ALTER TABLE users DROP COLUMN role;
