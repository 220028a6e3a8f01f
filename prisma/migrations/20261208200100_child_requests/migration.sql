-- The children room (docs/decisions/023-child-requests.md). A parent step that starts child
-- requests parks like any wait step; arming writes one `child_wait` for the step and one
-- `child_request` per child, with the child requests themselves, in the parking transaction.
--
-- At most once (invariant 11): a child is the pair (parent step, index). The primary key of
-- `child_request` and the request's own idempotency key (requester, `fenceline.child:<step>:<index>`)
-- are unique constraints, so no retry, recovery or second worker writes a second child for one
-- index: the parking transaction that tried would fail whole.
--
-- The end of a child reaches its parent by trigger (`child_ends_to_its_parent`): whatever path
-- ends the child (its last receipt, a failure, a cancel, an abandoned review), the counter of its
-- parent's wait moves in the same transaction, and when every child has ended (or one failed, and
-- the parent says a failed child fails it) the wait becomes due for the keepers, who settle the
-- parent step with the children's results. The end of the parent step other than by settlement
-- (its request cancelled or failed) cancels its unfinished children (`children_end_with_their_step`):
-- a child never outlives its parent.

-- The built-in adapter the children's parent steps run on: arming computes the children's inputs
-- inside the worker and changes nothing outside the database, so it is safe to repeat.
INSERT INTO "adapter_definition" ("name", "version", "external_effect", "idempotency_keys", "status_query", "fence_enforcement",
                                  "repetition", "timeout_ms", "concurrency_limit")
VALUES ('fenceline.children', '1', false, false, false, false, 'safe', 10000, 1000);

-- waiting: children under way; ended: all ended, the step settled with their results; failed: a
-- child failed and the step said that fails it; cancelled: the step ended otherwise (its request
-- was cancelled or failed), and took its unfinished children with it.
CREATE TYPE "child_wait_state" AS ENUM ('waiting', 'ended', 'failed', 'cancelled');

CREATE TABLE "child_wait" (
  "step_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "state" "child_wait_state" NOT NULL DEFAULT 'waiting',
  "on_child_failure" TEXT NOT NULL,
  "children_total" INTEGER NOT NULL,
  "children_ended" INTEGER NOT NULL DEFAULT 0,
  "children_failed" INTEGER NOT NULL DEFAULT 0,
  -- Set when the keepers have something to do: every child ended, or one failed under `fail`.
  "due_at" TIMESTAMPTZ(6),
  "armed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "settled_at" TIMESTAMPTZ(6),
  CONSTRAINT "child_wait_pkey" PRIMARY KEY ("step_id"),
  CONSTRAINT "child_wait_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "child_wait_on_child_failure" CHECK ("on_child_failure" IN ('fail', 'collect')),
  -- The fan-out bound (lib/children/definition.ts MAX_CHILDREN), kept here too.
  CONSTRAINT "child_wait_total" CHECK ("children_total" BETWEEN 1 AND 1000),
  CONSTRAINT "child_wait_counts" CHECK ("children_ended" BETWEEN 0 AND "children_total" AND "children_failed" BETWEEN 0 AND "children_ended"),
  CONSTRAINT "child_wait_settled" CHECK (("state" = 'waiting') = ("settled_at" IS NULL))
);
CREATE INDEX "child_wait_due" ON "child_wait" ("due_at") WHERE "state" = 'waiting' AND "due_at" IS NOT NULL;
CREATE INDEX "child_wait_workflow_id_idx" ON "child_wait" ("workflow_id");

-- One per child: the parent step, the element's index in its list, the child request.
CREATE TABLE "child_request" (
  "parent_step_id" UUID NOT NULL,
  "index" INTEGER NOT NULL,
  "parent_workflow_id" UUID NOT NULL,
  "child_workflow_id" UUID NOT NULL,
  "ended_at" TIMESTAMPTZ(6),
  CONSTRAINT "child_request_pkey" PRIMARY KEY ("parent_step_id", "index"),
  CONSTRAINT "child_request_parent_step_id_fkey" FOREIGN KEY ("parent_step_id") REFERENCES "child_wait"("step_id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "child_request_child_workflow_id_fkey" FOREIGN KEY ("child_workflow_id") REFERENCES "workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "child_request_index" CHECK ("index" >= 0)
);
CREATE UNIQUE INDEX "child_request_child_workflow_id_key" ON "child_request" ("child_workflow_id");
CREATE INDEX "child_request_parent_workflow_id_idx" ON "child_request" ("parent_workflow_id");

-- A child's request left `active`: count it at its parent's wait, in the transaction that ended
-- it. The counter's row lock orders the children's ends, so exactly one of them sees the last.
CREATE FUNCTION "fl_child_ends_to_its_parent"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  parent UUID;
BEGIN
  UPDATE "child_request" SET "ended_at" = now()
  WHERE "child_workflow_id" = NEW."id" AND "ended_at" IS NULL
  RETURNING "parent_step_id" INTO parent;
  IF parent IS NULL THEN
    RETURN NULL;
  END IF;
  UPDATE "child_wait" c
  SET "children_ended" = c."children_ended" + 1,
      "children_failed" = c."children_failed" + (NEW."status" <> 'completed')::int,
      "due_at" = CASE
        WHEN c."children_ended" + 1 = c."children_total" OR (NEW."status" <> 'completed' AND c."on_child_failure" = 'fail')
          THEN coalesce(c."due_at", now())
        ELSE c."due_at" END
  WHERE c."step_id" = parent AND c."state" = 'waiting';
  RETURN NULL;
END $$;
CREATE TRIGGER "child_ends_to_its_parent" AFTER UPDATE OF "status" ON "workflow"
  FOR EACH ROW WHEN (OLD."status" = 'active' AND NEW."status" <> 'active')
  EXECUTE FUNCTION "fl_child_ends_to_its_parent"();

-- The parent step stopped waiting other than by its room's settlement: its request was cancelled
-- or failed. Its unfinished children are cancelled as a cancel does (lib/engine/sql/workflow.ts:
-- the request, its `request.cancelled` outbox event, its idle steps; a running step sees it at its
-- next fenced write), and their own children after them, by this same trigger. The children's
-- rows are taken before the wait's, the order in which a child's end takes them.
CREATE FUNCTION "fl_children_end_with_their_step"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  reason TEXT := 'the request that started it ended first';
BEGIN
  WITH cancelled AS (
    UPDATE "workflow" w SET "status" = 'cancelled', "status_reason" = reason, "updated_at" = now()
    FROM "child_request" c
    WHERE c."parent_step_id" = NEW."id" AND c."ended_at" IS NULL AND w."id" = c."child_workflow_id" AND w."status" = 'active'
    RETURNING w."id"
  )
  INSERT INTO "outbox_event" ("type", "workflow_id") SELECT 'request.cancelled', "id" FROM cancelled;
  UPDATE "step" s SET "state" = 'cancelled', "state_reason" = reason, "completed_at" = now(), "updated_at" = now()
  FROM "child_request" c JOIN "workflow" w ON w."id" = c."child_workflow_id"
  WHERE c."parent_step_id" = NEW."id" AND s."workflow_id" = w."id" AND w."status" = 'cancelled'
    AND s."state" IN ('blocked', 'ready', 'waiting');
  UPDATE "child_wait" SET "state" = 'cancelled', "settled_at" = now() WHERE "step_id" = NEW."id" AND "state" = 'waiting';
  RETURN NULL;
END $$;
CREATE TRIGGER "children_end_with_their_step" AFTER UPDATE OF "state" ON "step"
  FOR EACH ROW WHEN (OLD."state" = 'waiting' AND NEW."state" IN ('cancelled', 'failed'))
  EXECUTE FUNCTION "fl_children_end_with_their_step"();
