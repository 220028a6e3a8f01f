-- Fair share (issue 31, docs/decisions/020-fair-share.md): priorities, concurrency keys with a
-- limit on steps in flight per key, and a rate per destination.
--
-- A request carries a priority (1–9, higher first) and, optionally, a concurrency key (a tenant,
-- a customer). Its steps carry both, with the request's fair-share position, and the claim takes
-- ready steps by (priority, position, eligibility) from one index:
--  - the position is start-time fair queuing per key: a request of key K of a round-robin kind
--    takes max(V, K's last position) + 1, where V is the lowest position of a claimable ready
--    step at its priority; any other request (no key, or an oldest-first kind) takes V + 1. So
--    the i-th waiting request of a key is at most i positions behind the front.
--  - a kind's limit on steps in flight per key is admission: a step of a key that already has
--    `limit` steps admitted (ready to claim, leased, or released to wait) becomes ready with
--    next_eligible_at = 'infinity', outside the claim's index ("queued behind its key"), and is
--    admitted when one of its key's steps ends. Admission is counted in concurrency_slot rows,
--    taken under try-locks, so no statement ever waits on another to admit or free a step.

ALTER TABLE "workflow"
  ADD COLUMN "priority" SMALLINT NOT NULL DEFAULT 5,
  ADD COLUMN "concurrency_key" TEXT,
  ADD CONSTRAINT "workflow_priority_range" CHECK ("priority" BETWEEN 1 AND 9),
  ADD CONSTRAINT "workflow_concurrency_key_length" CHECK (length("concurrency_key") BETWEEN 1 AND 200);

ALTER TABLE "step"
  ADD COLUMN "priority" SMALLINT NOT NULL DEFAULT 5,
  ADD COLUMN "fair_position" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "concurrency_key" TEXT,
  -- The admission slot the step holds while it is ready or leased; NULL for a step of a
  -- kind without a limit, and for a step queued behind its key.
  ADD COLUMN "concurrency_slot" INTEGER;

-- The claim's scan: claimable ready steps by priority, then fair-share position, then
-- eligibility. Steps queued behind their key (eligible at 'infinity') are not in it.
DROP INDEX "step_ready_idx";
CREATE INDEX "step_claim_idx" ON "step" ("priority" DESC, "fair_position", "next_eligible_at", "id")
  WHERE "state" = 'ready' AND "next_eligible_at" < 'infinity';
-- Steps queued behind their key, in the order they are admitted.
CREATE INDEX "step_queued_idx" ON "step" ("concurrency_key", "priority" DESC, "fair_position", "id")
  WHERE "state" = 'ready' AND "next_eligible_at" = 'infinity';
-- Ready and leased steps per key, for the engineers' view. Steps without a key are not in it.
CREATE INDEX "step_keyed_active_idx" ON "step" ("concurrency_key", "state")
  WHERE "concurrency_key" IS NOT NULL AND "state" IN ('ready', 'leased');

-- What a kind declares (the highest registered version's declaration applies to the kind).
ALTER TABLE "workflow_definition"
  ADD COLUMN "limit_per_key" INTEGER,
  ADD COLUMN "fairness" TEXT NOT NULL DEFAULT 'round-robin',
  ADD COLUMN "default_priority" SMALLINT NOT NULL DEFAULT 5,
  ADD CONSTRAINT "workflow_definition_limit_per_key_positive" CHECK ("limit_per_key" IS NULL OR "limit_per_key" > 0),
  ADD CONSTRAINT "workflow_definition_fairness_known" CHECK ("fairness" IN ('round-robin', 'oldest-first')),
  ADD CONSTRAINT "workflow_definition_default_priority_range" CHECK ("default_priority" BETWEEN 1 AND 9);

-- An admin's override of a kind's declaration (audited in audit_log); its absence means the
-- declaration applies. A NULL limit is no limit.
CREATE TABLE "fair_share_override" (
  "kind" TEXT NOT NULL,
  "limit_per_key" INTEGER,
  "fairness" TEXT NOT NULL,
  "reason" TEXT NOT NULL,
  "set_by" TEXT NOT NULL,
  "set_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "fair_share_override_pkey" PRIMARY KEY ("kind"),
  CONSTRAINT "fair_share_override_limit_positive" CHECK ("limit_per_key" IS NULL OR "limit_per_key" > 0),
  CONSTRAINT "fair_share_override_fairness_known" CHECK ("fairness" IN ('round-robin', 'oldest-first'))
);

-- A key's place in its round-robin kind: the position of its latest request. Written by request
-- creation only, which locks the rows of its keys in (kind, key) order.
CREATE TABLE "concurrency_key" (
  "kind" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "last_position" BIGINT NOT NULL,
  "requests" BIGINT NOT NULL,
  "last_request_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "concurrency_key_pkey" PRIMARY KEY ("kind", "key")
);
-- Where the round robin stands when nothing is ready: the furthest position any key reached.
CREATE INDEX "concurrency_key_last_position_idx" ON "concurrency_key" ("last_position");

-- One row per step admitted under its kind's limit: a key has at most `limit` rows, numbered
-- 1..limit (rows above a lowered limit drain as their steps end).
CREATE TABLE "concurrency_slot" (
  "kind" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "slot" INTEGER NOT NULL,
  "step_id" UUID NOT NULL,
  "taken_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "concurrency_slot_pkey" PRIMARY KEY ("kind", "key", "slot"),
  CONSTRAINT "concurrency_slot_positive" CHECK ("slot" > 0)
);
CREATE UNIQUE INDEX "concurrency_slot_step_id_key" ON "concurrency_slot" ("step_id");

-- The fair-share settings in force for a kind: an admin's override, else the declaration of its
-- highest registered version, else no limit and round robin.
CREATE FUNCTION "fl_fair_share"(p_kind text) RETURNS TABLE ("limit_per_key" integer, "fairness" text)
  LANGUAGE sql STABLE
  AS $$
  SELECT CASE WHEN o."kind" IS NOT NULL THEN o."limit_per_key" ELSE d."limit_per_key" END,
         coalesce(o."fairness", d."fairness", 'round-robin')
  FROM (SELECT p_kind AS "kind") k
  LEFT JOIN "fair_share_override" o ON o."kind" = k."kind"
  LEFT JOIN LATERAL (
    SELECT wd."limit_per_key", wd."fairness" FROM "workflow_definition" wd WHERE wd."kind" = k."kind" ORDER BY wd."version" DESC LIMIT 1
  ) d ON true
$$;

-- Takes a free admission slot of (kind, key) under `p_limit` for step `p_step`; NULL when the
-- key has none free. A slot number is tried under a transaction-scoped try-lock, then checked
-- with a fresh snapshot: a taker that committed before the lock was granted is seen, one still
-- running holds the lock and the number is skipped. Nothing here waits.
CREATE FUNCTION "fl_take_concurrency_slot"(p_kind text, p_key text, p_limit integer, p_step uuid) RETURNS integer
  LANGUAGE plpgsql VOLATILE
  AS $$
DECLARE
  lock_key integer := hashtext(p_kind || chr(31) || p_key);
  candidate integer;
BEGIN
  -- Slots above a lowered limit still count until their steps end.
  IF (SELECT count(*) FROM "concurrency_slot" s WHERE s."kind" = p_kind AND s."key" = p_key) >= p_limit THEN
    RETURN NULL;
  END IF;
  FOR candidate IN
    SELECT n FROM generate_series(1, p_limit) n
    WHERE NOT EXISTS (SELECT 1 FROM "concurrency_slot" s WHERE s."kind" = p_kind AND s."key" = p_key AND s."slot" = n)
    ORDER BY n
  LOOP
    IF pg_try_advisory_xact_lock(lock_key, candidate)
       AND NOT EXISTS (SELECT 1 FROM "concurrency_slot" s WHERE s."kind" = p_kind AND s."key" = p_key AND s."slot" = candidate) THEN
      INSERT INTO "concurrency_slot" ("kind", "key", "slot", "step_id") VALUES (p_kind, p_key, candidate, p_step);
      RETURN candidate;
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;

-- Admits queued steps of (kind, key) while the key has room, highest priority and lowest
-- position first, at most `p_max`; returns how many. A step another transaction holds is skipped.
CREATE FUNCTION "fl_admit_queued"(p_kind text, p_key text, p_max integer) RETURNS integer
  LANGUAGE plpgsql VOLATILE
  AS $$
DECLARE
  key_limit integer;
  next_step uuid;
  taken integer;
  admitted integer := 0;
BEGIN
  SELECT f."limit_per_key" INTO key_limit FROM fl_fair_share(p_kind) f;
  WHILE admitted < p_max LOOP
    EXIT WHEN key_limit IS NOT NULL
      AND (SELECT count(*) FROM "concurrency_slot" s WHERE s."kind" = p_kind AND s."key" = p_key) >= key_limit;
    SELECT s."id" INTO next_step
    FROM "step" s JOIN "workflow" w ON w."id" = s."workflow_id"
    WHERE s."concurrency_key" = p_key AND s."state" = 'ready' AND s."next_eligible_at" = 'infinity' AND w."kind" = p_kind
    ORDER BY s."priority" DESC, s."fair_position", s."id"
    LIMIT 1
    FOR UPDATE OF s SKIP LOCKED;
    EXIT WHEN next_step IS NULL;
    taken := NULL;
    IF key_limit IS NOT NULL THEN
      taken := fl_take_concurrency_slot(p_kind, p_key, key_limit, next_step);
      EXIT WHEN taken IS NULL;
    END IF;
    UPDATE "step" SET "next_eligible_at" = now(), "concurrency_slot" = taken, "state_reason" = NULL, "updated_at" = now()
    WHERE "id" = next_step;
    admitted := admitted + 1;
  END LOOP;
  IF admitted > 0 THEN
    PERFORM pg_notify('fenceline_step_ready', '');
  END IF;
  RETURN admitted;
END
$$;

-- Admits a keyed step that is becoming ready without a slot: the slot it took (NULL when its kind
-- has no limit), or, when its key has none free, why it must wait (the caller queues it).
CREATE FUNCTION "fl_admission_of"(p_step uuid, p_workflow uuid, p_key text, OUT slot integer, OUT queued_because text)
  LANGUAGE plpgsql VOLATILE
  AS $$
DECLARE
  step_kind text;
  key_limit integer;
BEGIN
  SELECT w."kind" INTO step_kind FROM "workflow" w WHERE w."id" = p_workflow;
  SELECT f."limit_per_key" INTO key_limit FROM fl_fair_share(step_kind) f;
  IF key_limit IS NOT NULL THEN
    slot := fl_take_concurrency_slot(step_kind, p_key, key_limit, p_step);
    IF slot IS NULL THEN
      queued_because := format('queued behind concurrency key %s: %s steps in flight, its limit', p_key, key_limit);
    END IF;
  END IF;
END
$$;

-- BEFORE a keyed step is inserted ready: admitted, or queued behind its key.
CREATE FUNCTION "fl_admit_new_step"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  admission record := fl_admission_of(NEW."id", NEW."workflow_id", NEW."concurrency_key");
BEGIN
  IF admission.queued_because IS NOT NULL THEN
    NEW."next_eligible_at" := 'infinity';
    NEW."state_reason" := admission.queued_because;
  ELSE
    NEW."concurrency_slot" := admission.slot;
  END IF;
  RETURN NEW;
END
$$;

-- AFTER a keyed step's state changes (after its statement, so no row the statement changes is
-- changed under it, and without a BEFORE UPDATE trigger, which would lock every updated step
-- first): a step that leaves ready and leased (it ended, went to review, or waits for something
-- else) frees its slot for the next step queued behind its key; a step that becomes ready
-- without a slot is admitted or queued.
CREATE FUNCTION "fl_fair_share_on_state_change"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  step_kind text;
  admission record;
BEGIN
  IF OLD."concurrency_slot" IS NOT NULL AND NEW."state" NOT IN ('ready', 'leased') THEN
    DELETE FROM "concurrency_slot" WHERE "step_id" = NEW."id";
    UPDATE "step" SET "concurrency_slot" = NULL WHERE "id" = NEW."id";
    SELECT w."kind" INTO step_kind FROM "workflow" w WHERE w."id" = NEW."workflow_id";
    PERFORM fl_admit_queued(step_kind, NEW."concurrency_key", 1);
  ELSIF NEW."state" = 'ready' AND NEW."concurrency_slot" IS NULL THEN
    admission := fl_admission_of(NEW."id", NEW."workflow_id", NEW."concurrency_key");
    IF admission.queued_because IS NOT NULL THEN
      UPDATE "step" SET "next_eligible_at" = 'infinity', "state_reason" = admission.queued_because WHERE "id" = NEW."id";
    ELSIF admission.slot IS NOT NULL THEN
      UPDATE "step" SET "concurrency_slot" = admission.slot WHERE "id" = NEW."id";
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "step_admit_on_insert" BEFORE INSERT ON "step"
  FOR EACH ROW WHEN (NEW."concurrency_key" IS NOT NULL AND NEW."state" = 'ready')
  EXECUTE FUNCTION "fl_admit_new_step"();
CREATE TRIGGER "step_fair_share_on_state_change" AFTER UPDATE OF "state" ON "step"
  FOR EACH ROW WHEN (NEW."concurrency_key" IS NOT NULL AND OLD."state" IS DISTINCT FROM NEW."state")
  EXECUTE FUNCTION "fl_fair_share_on_state_change"();

-- A destination's rate: the calls per second (and burst) its adapter declares, enforced at the
-- permit across all workers on the database clock. The latest registration of an adapter name
-- decides it. `calls` numbers the calls granted; the next call uses ring slot calls % per_second,
-- which must not have been used within the rate window; `next_at` is the burst's theoretical
-- arrival time (GCRA); `booked_until` is how far ahead the steps told to wait have been spread
-- (each refusal books the next free moment, each call takes one booking back). The row is locked
-- by every permit for the destination.
ALTER TABLE "adapter_definition"
  ADD COLUMN "rate_per_second" INTEGER,
  ADD COLUMN "rate_burst" INTEGER,
  ADD CONSTRAINT "adapter_definition_rate_valid" CHECK (
    ("rate_per_second" IS NULL AND "rate_burst" IS NULL)
    OR ("rate_per_second" > 0 AND "rate_burst" > 0 AND "rate_burst" <= "rate_per_second")
  );

CREATE TABLE "adapter_rate" (
  "adapter" TEXT NOT NULL,
  "per_second" INTEGER NOT NULL,
  "burst" INTEGER NOT NULL,
  "declared_by" TEXT NOT NULL,
  "calls" BIGINT NOT NULL DEFAULT 0,
  "next_at" TIMESTAMPTZ(6) NOT NULL DEFAULT '-infinity',
  "booked_until" TIMESTAMPTZ(6) NOT NULL DEFAULT '-infinity',
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "adapter_rate_pkey" PRIMARY KEY ("adapter"),
  CONSTRAINT "adapter_rate_valid" CHECK ("per_second" > 0 AND "burst" > 0 AND "burst" <= "per_second")
);

CREATE TABLE "adapter_call_slot" (
  "adapter" TEXT NOT NULL,
  "slot" INTEGER NOT NULL,
  "called_at" TIMESTAMPTZ(6) NOT NULL DEFAULT '-infinity',
  CONSTRAINT "adapter_call_slot_pkey" PRIMARY KEY ("adapter", "slot")
);
