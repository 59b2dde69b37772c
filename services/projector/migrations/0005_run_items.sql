-- The lists of a run's state that grow with the run (calls, turns, signals) move out of runs.state into one
-- row per entry, so a batch writes the entries it changed instead of the whole state (see db/schema.ts).
CREATE TABLE "run_items" (
	"run_id" text NOT NULL,
	"list" text NOT NULL,
	"idx" integer NOT NULL,
	"item" jsonb NOT NULL,
	CONSTRAINT "run_items_run_id_list_idx_pk" PRIMARY KEY("run_id","list","idx")
);
--> statement-breakpoint
INSERT INTO "run_items" ("run_id", "list", "idx", "item")
SELECT r."run_id", l."list", (e."ordinality" - 1)::integer, e."value"
FROM "runs" r
CROSS JOIN (VALUES ('calls'), ('turns'), ('signals')) AS l("list")
CROSS JOIN LATERAL jsonb_array_elements(
  CASE WHEN jsonb_typeof(r."state" -> l."list") = 'array' THEN r."state" -> l."list" ELSE '[]'::jsonb END
) WITH ORDINALITY AS e("value", "ordinality");
--> statement-breakpoint
UPDATE "runs" SET "state" = "state" - 'calls' - 'turns' - 'signals'
WHERE jsonb_exists_any("state", ARRAY['calls', 'turns', 'signals']);
