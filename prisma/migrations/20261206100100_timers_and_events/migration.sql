-- The timer and event rooms (docs/decisions/019-steps-that-wait.md). Each keeps its own record of
-- a waiting step, and each record ends with its step: a trigger per room cancels the record when
-- the step stops waiting other than by the room's own settlement (its request was cancelled,
-- failed or abandoned), so no path that ends a request has to know the rooms.

-- The built-in adapters the waits' steps run on: arming computes a time or a key inside the
-- worker and changes nothing outside the database, so it is safe to repeat.
INSERT INTO "adapter_definition" ("name", "version", "external_effect", "idempotency_keys", "status_query", "fence_enforcement",
                                  "repetition", "timeout_ms", "concurrency_limit")
VALUES ('fenceline.timer', '1', false, false, false, false, 'safe', 10000, 1000),
       ('fenceline.event', '1', false, false, false, false, 'safe', 10000, 1000);

-- ---- timers --------------------------------------------------------------------------------

CREATE TYPE "timer_state" AS ENUM ('waiting', 'fired', 'cancelled');

-- One per armed timer step. `requested` keeps what the step asked for (a duration, or a time with
-- its zone) beside the instant it resolved to.
CREATE TABLE "timer" (
  "step_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "state" "timer_state" NOT NULL DEFAULT 'waiting',
  "due_at" TIMESTAMPTZ(6) NOT NULL,
  "requested" JSONB NOT NULL,
  "armed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "settled_at" TIMESTAMPTZ(6),
  CONSTRAINT "timer_pkey" PRIMARY KEY ("step_id"),
  CONSTRAINT "timer_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "timer_settled" CHECK (("state" = 'waiting') = ("settled_at" IS NULL))
);
-- What the keepers read: the earliest due timers still waiting. Fired ones leave the index.
CREATE INDEX "timer_due" ON "timer" ("due_at") WHERE "state" = 'waiting';
CREATE INDEX "timer_workflow_id_idx" ON "timer" ("workflow_id");

CREATE FUNCTION "fl_timer_ends_with_its_step"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE "timer" SET "state" = 'cancelled', "settled_at" = now() WHERE "step_id" = NEW."id" AND "state" = 'waiting';
  RETURN NULL;
END $$;
CREATE TRIGGER "timer_ends_with_its_step" AFTER UPDATE OF "state" ON "step"
  FOR EACH ROW WHEN (OLD."state" = 'waiting' AND NEW."state" IN ('cancelled', 'failed'))
  EXECUTE FUNCTION "fl_timer_ends_with_its_step"();

-- ---- events and the waits for them ---------------------------------------------------------

CREATE TYPE "event_wait_state" AS ENUM ('waiting', 'received', 'timed_out', 'cancelled');

-- An event from outside: named, correlated by a key (an order id), with a bounded payload. Sent
-- by an app (`app:<name>`), through a wait's one-time URL (`url`), or by a test. A repeated send
-- with the same idempotency key is the same event. Consumed by at most one wait; an event no wait
-- has taken yet is kept until `keep_until` for a wait that begins later.
CREATE TABLE "event" (
  "id" UUID NOT NULL DEFAULT fl_uuid_v7(),
  "name" TEXT NOT NULL,
  "correlation_key" TEXT NOT NULL,
  "payload" JSONB NOT NULL,
  "payload_digest" TEXT NOT NULL,
  "sender" TEXT NOT NULL,
  "idempotency_key" TEXT,
  "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "keep_until" TIMESTAMPTZ(6) NOT NULL,
  "consumed_by_step_id" UUID,
  "consumed_at" TIMESTAMPTZ(6),
  CONSTRAINT "event_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "event_consumed" CHECK (("consumed_by_step_id" IS NULL) = ("consumed_at" IS NULL))
);
CREATE UNIQUE INDEX "event_sender_idempotency_key" ON "event" ("sender", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
-- A wait that begins looks here for the oldest event it may take.
CREATE INDEX "event_unconsumed" ON "event" ("name", "correlation_key", "received_at") WHERE "consumed_at" IS NULL;
CREATE INDEX "event_by_key" ON "event" ("name", "correlation_key", "received_at");
CREATE INDEX "event_received_at" ON "event" USING BRIN ("received_at");

-- One per armed event-wait step: what it waits for, until when, and what a timeout means.
CREATE TABLE "event_wait" (
  "step_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "name" TEXT NOT NULL,
  "correlation_key" TEXT NOT NULL,
  "state" "event_wait_state" NOT NULL DEFAULT 'waiting',
  "timeout_at" TIMESTAMPTZ(6),
  "on_timeout" TEXT NOT NULL,
  -- The one-time URL's secret, when the step asked for one; dead once the wait is settled.
  "url_token" TEXT,
  "armed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "event_id" UUID,
  "settled_at" TIMESTAMPTZ(6),
  CONSTRAINT "event_wait_pkey" PRIMARY KEY ("step_id"),
  CONSTRAINT "event_wait_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "event_wait_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "event"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "event_wait_on_timeout" CHECK ("on_timeout" IN ('continue', 'fail')),
  CONSTRAINT "event_wait_settled" CHECK (("state" = 'waiting') = ("settled_at" IS NULL)),
  CONSTRAINT "event_wait_received" CHECK (("state" = 'received') = ("event_id" IS NOT NULL))
);
CREATE UNIQUE INDEX "event_wait_url_token" ON "event_wait" ("url_token") WHERE "url_token" IS NOT NULL;
-- An event that arrives looks here for the oldest wait it may settle.
CREATE INDEX "event_wait_open" ON "event_wait" ("name", "correlation_key", "armed_at") WHERE "state" = 'waiting';
CREATE INDEX "event_wait_timeout" ON "event_wait" ("timeout_at") WHERE "state" = 'waiting' AND "timeout_at" IS NOT NULL;
CREATE INDEX "event_wait_workflow_id_idx" ON "event_wait" ("workflow_id");

CREATE FUNCTION "fl_event_wait_ends_with_its_step"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE "event_wait" SET "state" = 'cancelled', "settled_at" = now() WHERE "step_id" = NEW."id" AND "state" = 'waiting';
  RETURN NULL;
END $$;
CREATE TRIGGER "event_wait_ends_with_its_step" AFTER UPDATE OF "state" ON "step"
  FOR EACH ROW WHEN (OLD."state" = 'waiting' AND NEW."state" IN ('cancelled', 'failed'))
  EXECUTE FUNCTION "fl_event_wait_ends_with_its_step"();

-- Apps send events with a scope of their own.
ALTER TABLE "app_key" DROP CONSTRAINT "app_key_scopes_known";
ALTER TABLE "app_key" ADD CONSTRAINT "app_key_scopes_known"
  CHECK ("scopes" <@ ARRAY['requests:create', 'requests:read', 'events:send']::text[] AND cardinality("scopes") > 0);
