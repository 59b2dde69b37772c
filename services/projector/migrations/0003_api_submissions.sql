CREATE TABLE "api_submissions" (
	"run_id" text PRIMARY KEY NOT NULL,
	"body_hash" text NOT NULL,
	"tenant" text NOT NULL,
	"caller" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
