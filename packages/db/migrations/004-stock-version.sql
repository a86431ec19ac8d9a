-- Versions that every change of a SKU's stock row moves, and every change of which orders it holds,
-- whoever writes (a DBA's raw SQL included): the purchase API keeps a sold-out SKU's buyers while both
-- are unchanged. updated_at cannot serve: two changes can carry the same millisecond (a statement is
-- stamped with its start), and an order can be inserted, reassigned or deleted without touching the
-- stock row. The orders' version is a table of its own: a trigger may not write a table that the
-- statement firing it reads (a DBA's INSERT … SELECT FROM sale_stock).
-- flashgate's own sessions set @flashgate_orders_move_stock: each of their transactions that changes a
-- SKU's orders changes its stock row too (a sale takes units, a closure returns one), so the order
-- triggers leave the version to that change rather than write once more per order of a sale.
-- Statements end with a line holding only ";".

DROP PROCEDURE IF EXISTS flashgate_stock_version
;

CREATE PROCEDURE flashgate_stock_version()
BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                  WHERE table_schema = DATABASE() AND table_name = 'sale_stock' AND column_name = 'version') THEN
    ALTER TABLE sale_stock ADD COLUMN version BIGINT UNSIGNED NOT NULL DEFAULT 0;
  END IF;
END
;

CALL flashgate_stock_version()
;

DROP PROCEDURE flashgate_stock_version
;

CREATE TABLE IF NOT EXISTS sku_orders_version (
  activity_id BIGINT NOT NULL,
  sku_id BIGINT NOT NULL,
  version BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (activity_id, sku_id)
) ENGINE=InnoDB
;

DROP TRIGGER IF EXISTS sale_stock_version
;

CREATE TRIGGER sale_stock_version BEFORE UPDATE ON sale_stock FOR EACH ROW
  SET NEW.version = OLD.version + 1
;

DROP TRIGGER IF EXISTS sale_order_inserted_version
;

CREATE TRIGGER sale_order_inserted_version AFTER INSERT ON sale_order FOR EACH ROW
BEGIN
  IF @flashgate_orders_move_stock IS NULL THEN
    INSERT INTO sku_orders_version VALUES (NEW.activity_id, NEW.sku_id, 1) ON DUPLICATE KEY UPDATE version = version + 1;
  END IF;
END
;

DROP TRIGGER IF EXISTS sale_order_changed_version
;

CREATE TRIGGER sale_order_changed_version AFTER UPDATE ON sale_order FOR EACH ROW
BEGIN
  IF @flashgate_orders_move_stock IS NULL AND NOT (NEW.user_id <=> OLD.user_id AND NEW.request_id <=> OLD.request_id
      AND NEW.closed_seq <=> OLD.closed_seq AND NEW.activity_id <=> OLD.activity_id AND NEW.sku_id <=> OLD.sku_id) THEN
    INSERT INTO sku_orders_version VALUES (OLD.activity_id, OLD.sku_id, 1) ON DUPLICATE KEY UPDATE version = version + 1;
    INSERT INTO sku_orders_version VALUES (NEW.activity_id, NEW.sku_id, 1) ON DUPLICATE KEY UPDATE version = version + 1;
  END IF;
END
;

DROP TRIGGER IF EXISTS sale_order_deleted_version
;

CREATE TRIGGER sale_order_deleted_version AFTER DELETE ON sale_order FOR EACH ROW
BEGIN
  IF @flashgate_orders_move_stock IS NULL THEN
    INSERT INTO sku_orders_version VALUES (OLD.activity_id, OLD.sku_id, 1) ON DUPLICATE KEY UPDATE version = version + 1;
  END IF;
END
;
