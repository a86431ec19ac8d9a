-- Rebuy after close. Runs for every write path, raw SQL included: a DBA closing an order by hand frees
-- the user too. Statements end with a line holding only ";".

DROP TRIGGER IF EXISTS sale_order_rebuy_on_close
;

CREATE TRIGGER sale_order_rebuy_on_close BEFORE UPDATE ON sale_order FOR EACH ROW
BEGIN
  IF NEW.state = 'CLOSED' AND OLD.state <> 'CLOSED' AND NEW.closed_seq = 0 THEN
    IF (SELECT rebuy_after_close FROM activity WHERE id = NEW.activity_id) THEN
      SET NEW.closed_seq = UUID_SHORT();
    END IF;
  END IF;
END
;
