-- The sale schema. Every statement is safe to re-run (IF NOT EXISTS / DROP … IF EXISTS): DDL commits on
-- its own, so a crash between a statement and its bookkeeping row must not wedge the next start.
-- Statements end with a line holding only ";". The SQL runs on MySQL 8 and MariaDB 10.11.

CREATE TABLE IF NOT EXISTS activity (
  id BIGINT PRIMARY KEY,
  name VARCHAR(200) NOT NULL,
  starts_at DATETIME(3) NOT NULL,
  ends_at DATETIME(3) NOT NULL,
  payment_timeout_s INT NOT NULL DEFAULT 900,
  rebuy_after_close BOOLEAN NOT NULL DEFAULT FALSE,
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB
;

CREATE TABLE IF NOT EXISTS sale_stock (
  activity_id BIGINT NOT NULL,
  sku_id BIGINT NOT NULL,
  available INT NOT NULL,
  price_cents BIGINT NOT NULL,
  currency CHAR(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (activity_id, sku_id),
  CONSTRAINT available_not_negative CHECK (available >= 0)
) ENGINE=InnoDB
;

-- closed_seq is 0 for every live order, so one_purchase keeps one live order per user; closing an
-- order of a rebuy activity moves it out of the way (see the trigger in 002).
CREATE TABLE IF NOT EXISTS sale_order (
  request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY,
  activity_id BIGINT NOT NULL,
  sku_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  state ENUM('PENDING','PAID','CLOSED') NOT NULL,
  amount_cents BIGINT NOT NULL,
  currency CHAR(3) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  closed_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
  UNIQUE KEY one_purchase (activity_id, sku_id, user_id, closed_seq),
  KEY pending_expiry (state, expires_at),
  KEY by_sku (activity_id, sku_id, state)
) ENGINE=InnoDB
;

CREATE TABLE IF NOT EXISTS stock_ledger (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  activity_id BIGINT NOT NULL,
  sku_id BIGINT NOT NULL,
  delta INT NOT NULL,
  available_after INT NOT NULL,
  reason VARCHAR(500) NOT NULL,
  operator VARCHAR(200) NOT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY by_sku (activity_id, sku_id, id)
) ENGINE=InnoDB
;

CREATE TABLE IF NOT EXISTS payment_event (
  event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY,
  request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  status VARCHAR(16) NOT NULL,
  amount_cents BIGINT NOT NULL,
  currency CHAR(3) NOT NULL,
  outcome VARCHAR(32) NOT NULL,
  needs_refund BOOLEAN NOT NULL DEFAULT FALSE,
  received_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY by_order (request_id),
  KEY refunds (needs_refund)
) ENGINE=InnoDB
;

CREATE TABLE IF NOT EXISTS debezium_signal (
  id VARCHAR(42) PRIMARY KEY,
  type VARCHAR(32) NOT NULL,
  data VARCHAR(2048) NULL
) ENGINE=InnoDB
;

-- The maintainer bumps this row every second (bumpHeartbeat), so an idle database still yields a change
-- whose millisecond timestamp measures end-to-end lag.
CREATE TABLE IF NOT EXISTS cdc_heartbeat (
  id TINYINT PRIMARY KEY,
  beat_at DATETIME(3) NOT NULL
) ENGINE=InnoDB
;
