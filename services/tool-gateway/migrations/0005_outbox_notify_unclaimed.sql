-- Wake relays only for rows a relay pass may take: a row queued claimed by its writer (the fast path) is
-- published by that writer, and passes leave it alone until its claim runs out, so a notification for it
-- only costs every relay an empty pass. A re-queued row (sent_at reset by an upsert) still wakes them.
-- Row-level with WHEN: rows that fail the condition queue no trigger event; pg_notify folds the
-- notifications of one transaction into one.
DROP TRIGGER outbox_notify ON outbox;
--> statement-breakpoint
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH ROW WHEN (NEW.claimed_until IS NULL)
  EXECUTE FUNCTION dura_outbox_notify();
--> statement-breakpoint
CREATE TRIGGER outbox_notify_requeued AFTER UPDATE OF sent_at ON outbox FOR EACH ROW
  WHEN (OLD.sent_at IS NOT NULL AND NEW.sent_at IS NULL) EXECUTE FUNCTION dura_outbox_notify();
