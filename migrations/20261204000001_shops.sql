-- Shop reads: shop types, a shop's type and position kept valid by the
-- database itself, and the index of the paged list by type.
--
-- `x` is the longitude and `y` the latitude, in degrees (WGS 84), both set
-- or both NULL, within the range Redis GEO accepts.
CREATE TABLE shop_types (
    id    BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name  VARCHAR(32)     NOT NULL,
    icon  VARCHAR(255)    NOT NULL DEFAULT '',
    sort  INT UNSIGNED    NOT NULL DEFAULT 0,
    UNIQUE KEY uk_shop_types_name (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

INSERT INTO shop_types (id, name, icon, sort) VALUES
    (1, 'Food', '/types/food.png', 1),
    (2, 'KTV', '/types/ktv.png', 2),
    (3, 'Beauty', '/types/beauty.png', 3),
    (4, 'Fitness', '/types/fitness.png', 4),
    (5, 'Massage', '/types/massage.png', 5),
    (6, 'Spa', '/types/spa.png', 6),
    (7, 'Kids', '/types/kids.png', 7),
    (8, 'Bars', '/types/bars.png', 8),
    (9, 'Hotels', '/types/hotels.png', 9),
    (10, 'Nails', '/types/nails.png', 10);

UPDATE shops SET type_id = 1 WHERE type_id NOT IN (SELECT id FROM shop_types);

ALTER TABLE shops
    ALTER COLUMN type_id SET DEFAULT 1,
    ADD KEY idx_shops_type (type_id, id),
    ADD CONSTRAINT fk_shops_type FOREIGN KEY (type_id) REFERENCES shop_types (id),
    ADD CONSTRAINT ck_shops_position CHECK (
        (x IS NULL AND y IS NULL)
        OR (x BETWEEN -180 AND 180 AND y BETWEEN -85.05112878 AND 85.05112878)
    );
