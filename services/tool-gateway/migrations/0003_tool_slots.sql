CREATE TABLE "tool_slots" (
	"tool" text NOT NULL,
	"slot" integer NOT NULL,
	"holder" text,
	"lease_until" timestamp with time zone,
	CONSTRAINT "tool_slots_tool_slot_pk" PRIMARY KEY("tool","slot")
);
