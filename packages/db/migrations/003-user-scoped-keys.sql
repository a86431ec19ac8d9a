-- An Idempotency-Key is its user's: the same key from another user is another purchase (and must not
-- tell them that the key exists). Orders get an id of their own, which payments and back-office use,
-- made by the database for every writer (a DBA's INSERT too); (user_id, request_id) stays unique. An
-- order placed before this migration keeps its key as its id (keys were unique then). Each step checks whether it has run, so a crash between two steps (DDL
-- commits on its own) leaves a migration that can run again. Statements end with a line holding only ";".

DROP PROCEDURE IF EXISTS flashgate_user_scoped_keys
;

CREATE PROCEDURE flashgate_user_scoped_keys()
BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                  WHERE table_schema = DATABASE() AND table_name = 'sale_order' AND column_name = 'order_id') THEN
    ALTER TABLE sale_order ADD COLUMN order_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL FIRST;
  END IF;
  UPDATE sale_order SET order_id = request_id WHERE order_id IS NULL;
  IF NOT EXISTS (SELECT 1 FROM information_schema.statistics
                  WHERE table_schema = DATABASE() AND table_name = 'sale_order' AND index_name = 'PRIMARY'
                    AND column_name = 'order_id') THEN
    ALTER TABLE sale_order
      MODIFY order_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT (UUID()),
      DROP PRIMARY KEY,
      ADD PRIMARY KEY (order_id),
      ADD UNIQUE KEY idempotency (user_id, request_id);
  END IF;
  IF EXISTS (SELECT 1 FROM information_schema.columns
              WHERE table_schema = DATABASE() AND table_name = 'payment_event' AND column_name = 'request_id') THEN
    ALTER TABLE payment_event RENAME COLUMN request_id TO order_id;
  END IF;
END
;

CALL flashgate_user_scoped_keys()
;

DROP PROCEDURE flashgate_user_scoped_keys
;
