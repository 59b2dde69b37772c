CREATE TABLE "timers" (
	"run_id" text NOT NULL,
	"wait_id" text NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"causation_id" text NOT NULL,
	"correlation_id" text NOT NULL,
	"trace" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"fired_at" timestamp with time zone,
	CONSTRAINT "timers_run_id_wait_id_pk" PRIMARY KEY("run_id","wait_id")
);
--> statement-breakpoint
CREATE INDEX "timers_pending_idx" ON "timers" USING btree ("due_at") WHERE "timers"."fired_at" is null;--> statement-breakpoint
-- Wake every gateway's firing loop on commit of a new timer, so one due sooner than its next poll fires on time
-- (statement-level: one notification per inserting statement, even when ON CONFLICT inserted nothing).
CREATE OR REPLACE FUNCTION dura_timers_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dura_timers', '');
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER timers_notify AFTER INSERT ON timers FOR EACH STATEMENT EXECUTE FUNCTION dura_timers_notify();
