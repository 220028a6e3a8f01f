-- Child requests and compensation together (docs/decisions/022, 023). A child whose workflow
-- undoes its effects leaves `active` for `cancelling` or `failing` first and ends only when its
-- undos have their receipts: its parent counts it then, once, and not when its undoing begins.
DROP TRIGGER "child_ends_to_its_parent" ON "workflow";
CREATE TRIGGER "child_ends_to_its_parent" AFTER UPDATE OF "status" ON "workflow"
  FOR EACH ROW WHEN (OLD."status" IN ('active', 'cancelling', 'failing') AND NEW."status" IN ('completed', 'cancelled', 'failed'))
  EXECUTE FUNCTION "fl_child_ends_to_its_parent"();

-- A child cancelled with its parent's step may be undoing (`cancelling`) rather than cancelled:
-- its idle steps stop all the same; its undos are steps of their own, planned after.
CREATE OR REPLACE FUNCTION "fl_children_end_with_their_step"() RETURNS trigger
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
  WHERE c."parent_step_id" = NEW."id" AND s."workflow_id" = w."id" AND w."status" IN ('cancelled', 'cancelling')
    AND s."undoes_step_id" IS NULL AND s."state" IN ('blocked', 'ready', 'waiting');
  UPDATE "child_wait" SET "state" = 'cancelled', "settled_at" = now() WHERE "step_id" = NEW."id" AND "state" = 'waiting';
  RETURN NULL;
END $$;
