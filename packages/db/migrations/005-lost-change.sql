-- Changes the cache saw through CDC from a primary that was lost in a failover, whose transaction
-- (GTID) the new primary does not hold: a buyer may have been told 201 for an order that no longer
-- exists. The cache-maintainer writes a row per change when it finds one; operators read them
-- (`flashgate db lost-commits`) to contact, refund or re-create. A change is named by its transaction
-- and its place in the old primary's binlog, so finding it twice records it once.
-- Statements end with a line holding only ";".

CREATE TABLE IF NOT EXISTS lost_change (
  gtid VARCHAR(100) NOT NULL,
  binlog_position CHAR(29) NOT NULL,
  table_name VARCHAR(64) NOT NULL,
  op CHAR(1) NOT NULL,
  activity_id BIGINT NULL,
  sku_id BIGINT NULL,
  order_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  user_id BIGINT NULL,
  committed_at DATETIME(3) NOT NULL,
  detected_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  row_after JSON NULL,
  PRIMARY KEY (gtid, binlog_position),
  KEY lost_change_order (activity_id, sku_id, order_id)
) ENGINE=InnoDB
;
