-- A child's end wakes the keepers (docs/decisions/030-a-childs-end-wakes-the-keepers.md). The
-- trigger that counts a child at its parent's wait (20261208200100, counting once, when its undos
-- have finished: 20261208700000, whose trigger stays as it is) now also notifies
-- `fenceline_due_now` (lib/engine/waits.ts DUE_NOW_CHANNEL) when it makes the wait due: the
-- notice is delivered when the ending transaction commits, so a keeper that wakes on it sees the
-- count. Keepers still look at least once a second, so a notice no one heard costs only that.
CREATE OR REPLACE FUNCTION "fl_child_ends_to_its_parent"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  parent UUID;
  due TIMESTAMPTZ;
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
  WHERE c."step_id" = parent AND c."state" = 'waiting'
  RETURNING c."due_at" INTO due;
  -- Due from this transaction on (a wait already due before it was announced then). Notices with
  -- the same payload collapse within a transaction, so a cancel that ends many children sends one.
  IF due = now() THEN
    PERFORM pg_notify('fenceline_due_now', '');
  END IF;
  RETURN NULL;
END $$;
