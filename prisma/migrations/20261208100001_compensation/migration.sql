-- The compensation room (docs/decisions/022-compensation.md). An effect step may declare how to
-- undo its effect; its workflow declares when (on cancel, on failure, both). The registered
-- definition carries it per step: steps[i].compensate = { adapter, class, attemptBudget,
-- milestone, on }. The core learns nothing of it by name: a step that undoes another says so in
-- `step.undoes_step_id`, which the authority guard and the claim read as "may run while its
-- request is being undone", and the room keeps the rest in its own tables, moved by triggers.

-- A compensation step names the step whose effect it undoes. Null for every other step.
ALTER TABLE "step" ADD COLUMN "undoes_step_id" UUID;
ALTER TABLE "step" ADD CONSTRAINT "step_undoes_step_id_fkey" FOREIGN KEY ("undoes_step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE UNIQUE INDEX "step_undoes_step_id_key" ON "step" ("undoes_step_id") WHERE "undoes_step_id" IS NOT NULL;

-- One per request being undone: why (a cancel or a failure), when its compensations were planned
-- (once no step of the request is in flight or under review), when undoing finished, and what was
-- not undone and why (an effect known absent, or a person's word in review).
CREATE TABLE "compensation_run" (
  "workflow_id" UUID NOT NULL,
  "cause" TEXT NOT NULL,
  "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "planned_at" TIMESTAMPTZ(6),
  "finished_at" TIMESTAMPTZ(6),
  "not_undone" JSONB NOT NULL DEFAULT '[]',
  CONSTRAINT "compensation_run_pkey" PRIMARY KEY ("workflow_id"),
  CONSTRAINT "compensation_run_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "compensation_run_cause" CHECK ("cause" IN ('cancel', 'failure')),
  CONSTRAINT "compensation_run_finished_after_planned" CHECK ("finished_at" IS NULL OR "planned_at" IS NOT NULL)
);
-- What the keepers read: runs still waiting for their plan.
CREATE INDEX "compensation_run_unplanned" ON "compensation_run" ("started_at") WHERE "planned_at" IS NULL;

-- One per compensation step: the step it undoes, the receipt that made the undo due (its
-- reference and result are what the undo's payload is built from), its place in the reverse
-- order of receipts, and who decided the effect happened (the receipt, or a person in review).
CREATE TABLE "compensation" (
  "step_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "undoes_step_id" UUID NOT NULL,
  "receipt_id" UUID NOT NULL,
  "external_reference" TEXT,
  "rank" INTEGER NOT NULL,
  "decided_by" TEXT NOT NULL,
  "planned_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "compensation_pkey" PRIMARY KEY ("step_id"),
  CONSTRAINT "compensation_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "compensation_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "compensation_run"("workflow_id") ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT "compensation_undoes_step_id_key" UNIQUE ("undoes_step_id")
);
CREATE INDEX "compensation_workflow_id_idx" ON "compensation" ("workflow_id", "rank");

-- A request that ends by cancel or failure while its definition declares compensations for that
-- cause is being undone instead: `cancelling` or `failing`, with its run. Every path that ends a
-- request (a cancel, a step that fails, an abandoned review, a wait that times out) passes here,
-- so none of them has to know the room. Whether anything needs undoing is decided when the plan
-- is made, from receipts.
CREATE FUNCTION "fl_compensation_starts"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_cause TEXT := CASE NEW."status" WHEN 'cancelled' THEN 'cancel' ELSE 'failure' END;
BEGIN
  IF EXISTS (
    SELECT 1 FROM "workflow_definition" d, jsonb_array_elements(d."steps") st
    WHERE d."kind" = NEW."kind" AND d."version" = NEW."version"
      AND st->'compensate'->>'on' IN (v_cause, 'both')
  ) THEN
    NEW."status" := CASE v_cause WHEN 'cancel' THEN 'cancelling'::workflow_status ELSE 'failing'::workflow_status END;
    INSERT INTO "compensation_run" ("workflow_id", "cause") VALUES (NEW."id", v_cause) ON CONFLICT DO NOTHING;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "compensation_starts" BEFORE UPDATE OF "status" ON "workflow"
  FOR EACH ROW WHEN (OLD."status" = 'active' AND NEW."status" IN ('cancelled', 'failed'))
  EXECUTE FUNCTION "fl_compensation_starts"();

-- A request being undone ends when its run is planned and every compensation has its receipt:
-- `cancelled` or `failed` as its cause says, with a `request.undone` outbox event. Fired by each
-- compensation step that completes, and by the plan itself when there is nothing to undo.
CREATE FUNCTION "fl_compensation_finish"(p_workflow_id UUID) RETURNS void
  LANGUAGE plpgsql
  AS $$
BEGIN
  WITH finished AS (
    UPDATE "compensation_run" r SET "finished_at" = now()
    WHERE r."workflow_id" = p_workflow_id AND r."planned_at" IS NOT NULL AND r."finished_at" IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM "step" s
        WHERE s."workflow_id" = p_workflow_id AND s."undoes_step_id" IS NOT NULL
          AND s."state" NOT IN ('completed', 'completed_without_effect')
      )
    RETURNING r."workflow_id", r."cause"
  ),
  ended AS (
    UPDATE "workflow" w
    SET "status" = CASE f."cause" WHEN 'cancel' THEN 'cancelled'::workflow_status ELSE 'failed'::workflow_status END,
        "updated_at" = now()
    FROM finished f
    WHERE w."id" = f."workflow_id" AND w."status" IN ('cancelling', 'failing')
    RETURNING w."id"
  )
  INSERT INTO "outbox_event" ("type", "workflow_id") SELECT 'request.undone', "id" FROM ended;
END $$;

CREATE FUNCTION "fl_compensation_step_done"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM "fl_compensation_finish"(NEW."workflow_id");
  RETURN NULL;
END $$;
CREATE TRIGGER "compensation_step_done" AFTER UPDATE OF "state" ON "step"
  FOR EACH ROW WHEN (NEW."undoes_step_id" IS NOT NULL AND NEW."state" IN ('completed', 'completed_without_effect') AND OLD."state" IS DISTINCT FROM NEW."state")
  EXECUTE FUNCTION "fl_compensation_step_done"();

-- The event of a request whose undoing finished.
ALTER TABLE "outbox_event" DROP CONSTRAINT "outbox_event_type_check";
ALTER TABLE "outbox_event" ADD CONSTRAINT "outbox_event_type_check" CHECK ("type" IN
  ('request.completed', 'request.needs_review', 'request.review_resolved', 'request.could_not_be_completed', 'request.cancelled',
   'request.undone'));
