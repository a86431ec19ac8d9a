-- How an activity's admitted buyers are answered (ADR 0030): 'sync' waits for the database's decision,
-- 'queued' answers 202 with a ticket, 'auto' queues only while decisions wait; NULL follows the purchase
-- API's PURCHASE_ADMISSION. The cache copies it into each SKU with the sale window, so the fast path's
-- one script call chooses, and a DBA's UPDATE reaches the buyers through CDC like any other change.
-- Statements end with a line holding only ";".

DROP PROCEDURE IF EXISTS flashgate_activity_admission
;

CREATE PROCEDURE flashgate_activity_admission()
BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                  WHERE table_schema = DATABASE() AND table_name = 'activity' AND column_name = 'admission') THEN
    ALTER TABLE activity ADD COLUMN admission ENUM('sync', 'queued', 'auto') NULL DEFAULT NULL;
  END IF;
END
;

CALL flashgate_activity_admission()
;

DROP PROCEDURE flashgate_activity_admission
;
