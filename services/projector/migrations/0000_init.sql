CREATE TABLE "projector_checkpoints" (
	"name" text PRIMARY KEY NOT NULL,
	"last_seq" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "projection_errors" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"run_id" text,
	"code" text NOT NULL,
	"message" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "run_events" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"type" text NOT NULL,
	"event" jsonb NOT NULL,
	"ts" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"state" jsonb NOT NULL,
	"last_seq" bigint NOT NULL,
	"event_count" integer NOT NULL,
	"steps" integer NOT NULL,
	"created_at" timestamp with time zone,
	"updated_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "run_events_run_seq_idx" ON "run_events" USING btree ("run_id","seq");--> statement-breakpoint
CREATE INDEX "runs_status_updated_idx" ON "runs" USING btree ("status","updated_at");