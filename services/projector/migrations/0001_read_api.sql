-- The read model is a cache of the log: this release folds run requests differently (run_requested v3:
-- tags are labels, the old tag pairs are metadata) and keeps columns the old rows lack, so the projection
-- starts again from the first event instead of being patched. The new NOT NULL columns also stop a replica
-- of the previous release from writing into the emptied tables during a rolling upgrade.
TRUNCATE TABLE "runs", "run_events", "projection_errors", "projector_checkpoints";--> statement-breakpoint
DROP INDEX "runs_status_updated_idx";--> statement-breakpoint
ALTER TABLE "runs" ALTER COLUMN "created_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ALTER COLUMN "updated_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "pending_calls" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "last_error" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "input_tokens" bigint NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "output_tokens" bigint NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "tags" text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "metadata" jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "tools" text[] NOT NULL;--> statement-breakpoint
CREATE INDEX "runs_updated_idx" ON "runs" USING btree ("updated_at","run_id");--> statement-breakpoint
CREATE INDEX "runs_created_idx" ON "runs" USING btree ("created_at","run_id");--> statement-breakpoint
CREATE INDEX "runs_tags_idx" ON "runs" USING gin ("tags") WITH (gin_pending_list_limit=256);--> statement-breakpoint
CREATE INDEX "runs_tools_idx" ON "runs" USING gin ("tools") WITH (gin_pending_list_limit=256);--> statement-breakpoint
CREATE INDEX "runs_status_updated_idx" ON "runs" USING btree ("status","updated_at","run_id");
