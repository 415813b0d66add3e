-- The rights of `cityhub`, the platform's database user (docker-compose.yml).
--
-- The MariaDB image creates the user from MARIADB_USER / MARIADB_PASSWORD
-- with ALL on the MARIADB_DATABASE database, then runs this file once, on an
-- empty data volume. The platform needs less: its queries, and its own
-- migrations at start-up (sqlx: `CREATE DATABASE IF NOT EXISTS cityhub`, the
-- `_sqlx_migrations` table, tables, indexes, foreign keys and CHECKs), all on
-- the `cityhub` database. No global right, no GRANT OPTION, no FILE, PROCESS
-- or SUPER; root may log in from inside the container only
-- (MARIADB_ROOT_HOST=localhost).
REVOKE ALL PRIVILEGES ON `cityhub`.* FROM 'cityhub'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP, REFERENCES
    ON `cityhub`.* TO 'cityhub'@'%';
