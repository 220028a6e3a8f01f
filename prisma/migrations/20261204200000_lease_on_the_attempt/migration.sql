-- The lease lives on its attempt's row (decision 007). A lease and its attempt are one-to-one:
-- the claim wrote both in one statement, with the same step, term, epoch, owner and moment, and
-- every statement that ended the lease concluded the attempt at the same now(). One row now
-- carries both: the claim inserts one row, and a checkpoint, a receipt or an expiry updates one.
-- The lease stays readable as SPEC names it, through the view "lease" below.
ALTER TABLE "attempt"
  ADD COLUMN "policy_version" INTEGER,
  ADD COLUMN "renewed_at" TIMESTAMPTZ(6),
  ADD COLUMN "expires_at" TIMESTAMPTZ(6),
  ADD COLUMN "checkpoint_version" INTEGER NOT NULL DEFAULT 1,
  ADD COLUMN "end_reason" "lease_end_reason";

-- Existing leases move into their attempts (the lease named its attempt). The lease's end is
-- the attempt's end wherever both were recorded; a lease ended without its attempt concluding
-- cannot arise from the statements, but its end is kept if it did.
UPDATE "attempt" a
SET "policy_version" = l."policy_version", "renewed_at" = l."renewed_at", "expires_at" = l."expires_at",
    "checkpoint_version" = l."checkpoint_version", "end_reason" = l."end_reason",
    "ended_at" = coalesce(l."ended_at", a."ended_at"), "created_at" = l."leased_at"
FROM "lease" l
WHERE l."attempt_id" = a."id";

ALTER TABLE "attempt"
  ALTER COLUMN "policy_version" SET NOT NULL,
  ALTER COLUMN "expires_at" SET NOT NULL,
  ADD CONSTRAINT "attempt_lease_expires_after_grant" CHECK ("expires_at" > "created_at"),
  ADD CONSTRAINT "attempt_lease_end_has_reason" CHECK (("ended_at" IS NULL) = ("end_reason" IS NULL));

DROP TABLE "lease";

-- Invariant 1: at most one open (current) lease per step.
CREATE UNIQUE INDEX "attempt_one_open_lease_per_step" ON "attempt"("step_id") WHERE "ended_at" IS NULL;
-- The recovery scan reads open leases by expiry.
CREATE INDEX "attempt_open_lease_expires_at_idx" ON "attempt"("expires_at") WHERE "ended_at" IS NULL;
-- The lease history's derived `acquired` and `released` events are read by time.
CREATE INDEX "attempt_created_at_idx" ON "attempt" USING brin ("created_at") WITH (pages_per_range = 16);
CREATE INDEX "attempt_ended_at_idx" ON "attempt" USING brin ("ended_at") WITH (pages_per_range = 16);

-- SPEC's lease record, one row per fencing term, read from the attempt that carries it. A plain
-- projection of one table, so PostgreSQL can update through it (tests move expiries with it);
-- the engine's statements name the attempt row itself.
CREATE VIEW "lease" AS
SELECT "step_id", "fencing_term", "epoch", "workflow_id", "id" AS "attempt_id", "owner_session_id",
       "policy_version", "created_at" AS "leased_at", "renewed_at", "expires_at", "checkpoint_version",
       "ended_at", "end_reason"
FROM "attempt";

-- `acquired` and `released` are the attempt's start and end, no longer written as events. The
-- existing ones are converted, not kept: each is exactly its attempt's created_at or ended_at,
-- and keeping both would count every old lease twice. (An old `acquired` event also held the
-- first expiry, which a renewal has since moved; the history derives it as the expiry the lease
-- had when it ended or has now.)
ALTER TABLE "lease_event" DISABLE TRIGGER "lease_event_append_only";
DELETE FROM "lease_event" WHERE "kind" IN ('acquired', 'released');
ALTER TABLE "lease_event" ENABLE TRIGGER "lease_event_append_only";

-- Every lease event as SPEC lists them: the written ones (renewals, refusals, expiries,
-- revocations) and those derived from the attempt. A derived event has no id of its own; it
-- takes its attempt's, and sorts by time like the rest.
CREATE VIEW "lease_history" AS
SELECT e."id"::text AS "id", e."step_id", e."fencing_term", e."epoch", e."owner_session_id", e."kind", e."reason",
       e."expires_at", e."at"
FROM "lease_event" e
UNION ALL
SELECT 'acquired:' || a."id", a."step_id", a."fencing_term", a."epoch", a."owner_session_id",
       'acquired'::"lease_event_kind", NULL, a."expires_at", a."created_at"
FROM "attempt" a
UNION ALL
SELECT 'released:' || a."id", a."step_id", a."fencing_term", a."epoch", a."owner_session_id",
       'released'::"lease_event_kind",
       CASE a."end_reason" WHEN 'receipt' THEN 'receipt committed'
                           WHEN 'failed' THEN 'attempt failed: ' || a."outcome_reason"
                           ELSE a."outcome_reason" END,
       NULL, a."ended_at"
FROM "attempt" a
WHERE a."end_reason" IN ('receipt', 'released', 'failed');
