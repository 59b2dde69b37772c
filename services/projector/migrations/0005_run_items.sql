-- What grows with a run moves out of runs.state, so a batch writes what changed instead of the whole state
-- (see db/schema.ts): the lists (calls, turns, signals) to one row per entry in run_items, and the request
-- (fixed once the run is requested, as long as its input) to its own column, which an upsert leaves as it is.
CREATE TABLE "run_items" (
	"run_id" text NOT NULL,
	"list" text NOT NULL,
	"idx" integer NOT NULL,
	"item" jsonb NOT NULL,
	CONSTRAINT "run_items_run_id_list_idx_pk" PRIMARY KEY("run_id","list","idx")
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "request" jsonb;
--> statement-breakpoint
DO $$
BEGIN
  EXECUTE 'ALTER TABLE "runs" ALTER COLUMN "request" SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'runs.request keeps the default compression: %', SQLERRM;
END $$;
--> statement-breakpoint
INSERT INTO "run_items" ("run_id", "list", "idx", "item")
SELECT r."run_id", l."list", (e."ordinality" - 1)::integer, e."value"
FROM "runs" r
CROSS JOIN (VALUES ('calls'), ('turns'), ('signals')) AS l("list")
CROSS JOIN LATERAL jsonb_array_elements(
  CASE WHEN jsonb_typeof(r."state" -> l."list") = 'array' THEN r."state" -> l."list" ELSE '[]'::jsonb END
) WITH ORDINALITY AS e("value", "ordinality");
--> statement-breakpoint
UPDATE "runs" SET "request" = "state" -> 'request', "state" = "state" - 'request' - 'calls' - 'turns' - 'signals';
