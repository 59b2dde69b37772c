CREATE TABLE "effects" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"call_id" text NOT NULL,
	"step" integer NOT NULL,
	"tool" text NOT NULL,
	"args" jsonb NOT NULL,
	"status" text NOT NULL,
	"attempts" integer NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"lease_until" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"duration_ms" integer
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"msg_id" text NOT NULL,
	"subject" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	CONSTRAINT "outbox_msg_id_unique" UNIQUE("msg_id")
);
--> statement-breakpoint
CREATE INDEX "effects_run_idx" ON "effects" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "outbox_unsent_idx" ON "outbox" USING btree ("id") WHERE "outbox"."sent_at" is null;