-- Wake every relay replica on commit: one NOTIFY per inserting statement, delivered when its transaction commits
-- (statement-level, so a batch insert or an ON CONFLICT upsert that re-queues a row costs one notification).
CREATE OR REPLACE FUNCTION dura_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dura_outbox', '');
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION dura_outbox_notify();
--> statement-breakpoint
-- Per run, outbox ids follow commit order: a row takes its id only while holding the run's insert lock, which
-- is released at commit. Without this, a transaction that drew a lower id but committed later would let the
-- relay publish a newer observation of the run before an older one.
CREATE OR REPLACE FUNCTION dura_outbox_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('dura_outbox_insert'), hashtext(NEW.run_id));
  NEW.id := nextval(pg_get_serial_sequence('outbox', 'id'));
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER outbox_order BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION dura_outbox_order();
