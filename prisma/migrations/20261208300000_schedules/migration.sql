-- Schedules (issue 30, SPEC invariant 13, docs/decisions/024-schedules.md): requests started by
-- the clock. A schedule names a kind and version, an input, and a cron expression in an IANA
-- time zone; the keepers (DueWork, lib/schedules/room.ts) fire it on the database clock.
--
-- A due time starts at most one request: each due time the keepers reach is one row of
-- schedule_firing, keyed (schedule_id, due_at), written in the transaction that creates its
-- request, whose idempotency key is derived from the same pair. Two keepers that reach the same
-- due time cannot both commit: the second waits on the first's row lock on the schedule (or,
-- were that skipped, on the firing's primary key) and then writes nothing.

-- One per schedule. `next_due_at` is the next due time the keepers look for (NULL while paused);
-- `last_due_at` the last due time they accounted for (fired, skipped, queued or missed), from
-- which the next is computed: due times only move forward, on the zone's wall clock too, so a
-- local time that happens twice (autumn) is due once. `queued_due_at` is the one firing the
-- `queue_one` overlap policy holds back while the previous request runs.
CREATE TABLE "schedule" (
  "id" UUID NOT NULL DEFAULT fl_uuid_v7(),
  "name" TEXT NOT NULL,
  "owner" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "version" INTEGER NOT NULL,
  "input" JSONB NOT NULL,
  "due_time_field" TEXT,
  "cron" TEXT NOT NULL,
  "time_zone" TEXT NOT NULL,
  "dst_gap" TEXT NOT NULL DEFAULT 'shift',
  "overlap" TEXT NOT NULL DEFAULT 'skip',
  "catch_up" TEXT NOT NULL DEFAULT 'latest',
  "catch_up_limit" INTEGER NOT NULL DEFAULT 1,
  "state" TEXT NOT NULL DEFAULT 'active',
  "next_due_at" TIMESTAMPTZ(6),
  "last_due_at" TIMESTAMPTZ(6),
  "queued_due_at" TIMESTAMPTZ(6),
  "missed" BIGINT NOT NULL DEFAULT 0,
  "created_by" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "schedule_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "schedule_name_shape" CHECK ("name" ~ '^[a-z0-9][a-z0-9._-]{0,99}$'),
  CONSTRAINT "schedule_dst_gap_known" CHECK ("dst_gap" IN ('shift', 'skip')),
  CONSTRAINT "schedule_overlap_known" CHECK ("overlap" IN ('skip', 'queue_one', 'allow')),
  CONSTRAINT "schedule_catch_up_known" CHECK ("catch_up" IN ('none', 'latest', 'all')),
  CONSTRAINT "schedule_catch_up_limit_range" CHECK ("catch_up_limit" BETWEEN 1 AND 100),
  CONSTRAINT "schedule_state_known" CHECK ("state" IN ('active', 'paused')),
  CONSTRAINT "schedule_paused_not_due" CHECK ("state" = 'active' OR ("next_due_at" IS NULL AND "queued_due_at" IS NULL)),
  CONSTRAINT "schedule_cron_length" CHECK (length("cron") BETWEEN 1 AND 200),
  CONSTRAINT "schedule_time_zone_length" CHECK (length("time_zone") BETWEEN 1 AND 64)
);
CREATE UNIQUE INDEX "schedule_name_key" ON "schedule" ("name");
-- What the keepers read: the earliest due active schedules.
CREATE INDEX "schedule_due" ON "schedule" ("next_due_at") WHERE "state" = 'active';
CREATE INDEX "schedule_queued" ON "schedule" ("queued_due_at") WHERE "queued_due_at" IS NOT NULL;

-- One per due time a keeper reached: `started` (its request), `skipped` (overlap), `queued`
-- (overlap queue_one, started later) or `failed` (the kind's version is gone, the input no
-- longer fits: said in `reason`). The primary key is the guarantee: one row per due time.
-- `request_id` has no foreign key: retention may archive the request and keep the firing.
CREATE TABLE "schedule_firing" (
  "schedule_id" UUID NOT NULL,
  "due_at" TIMESTAMPTZ(6) NOT NULL,
  "state" TEXT NOT NULL,
  "request_id" UUID,
  "reason" TEXT,
  "fired_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "schedule_firing_pkey" PRIMARY KEY ("schedule_id", "due_at"),
  CONSTRAINT "schedule_firing_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "schedule"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "schedule_firing_state_known" CHECK ("state" IN ('started', 'skipped', 'queued', 'failed')),
  CONSTRAINT "schedule_firing_request" CHECK (("state" = 'started') = ("request_id" IS NOT NULL))
);
CREATE INDEX "schedule_firing_request_id_idx" ON "schedule_firing" ("request_id");

-- Apps manage their schedules with a scope of their own.
ALTER TABLE "app_key" DROP CONSTRAINT "app_key_scopes_known";
ALTER TABLE "app_key" ADD CONSTRAINT "app_key_scopes_known"
  CHECK ("scopes" <@ ARRAY['requests:create', 'requests:read', 'events:send', 'schedules:manage']::text[] AND cardinality("scopes") > 0);
