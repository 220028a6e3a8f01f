-- Review case ownership: who holds a case and since when. A case is taken, handed to a colleague
-- or given back by one guarded statement each (lib/review/ownership.ts); the two columns move
-- together, so a holder without a time (or a time without a holder) cannot be written.
ALTER TABLE "review_case" ADD COLUMN "assigned_at" TIMESTAMPTZ(6);
UPDATE "review_case" SET "assigned_at" = "opened_at" WHERE "assignee" IS NOT NULL;
ALTER TABLE "review_case" ADD CONSTRAINT "review_case_holder_with_time" CHECK (("assignee" IS NULL) = ("assigned_at" IS NULL));

-- The queue sorts by review-by time, so overdue cases come first and keyset pages stay stable.
DROP INDEX "review_case_status_opened_at_id_idx";
CREATE INDEX "review_case_status_review_by_id_idx" ON "review_case"("status", "review_by", "id");
-- "Mine": the open cases one person holds.
CREATE INDEX "review_case_open_by_assignee" ON "review_case"("assignee", "review_by", "id") WHERE "status" = 'open';

-- "Taking longer than usual" on /track: the latest steps of one name that settled, newest first
-- (lib/projection/sql.ts reads at most a bounded sample of them).
CREATE INDEX "step_settled_by_name" ON "step"("name", "completed_at" DESC) WHERE "state" IN ('completed', 'completed_without_effect');
