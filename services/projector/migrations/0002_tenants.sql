-- Runs belong to a tenant now. Every run stored so far was requested before requests could name one, so the
-- fold of its log says "default": the column's default, and the state (a cache that must equal the fold)
-- gets the same field. New events need no replay.
ALTER TABLE "runs" ADD COLUMN "tenant" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
UPDATE "runs" SET "state" = jsonb_set("state", '{tenant}', to_jsonb("tenant")) WHERE NOT jsonb_exists("state", 'tenant');--> statement-breakpoint
CREATE INDEX "runs_tenant_updated_idx" ON "runs" USING btree ("tenant","updated_at","run_id");
