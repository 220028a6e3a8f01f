-- Bulk actions on requests (issue 32, docs/decisions/026-the-request-page.md): an operator
-- cancels or reruns every request a filter of the requests list matches. The matches are
-- snapshotted as items when the action starts (bounded by the application, 500 at most), so
-- what runs is what the operator previewed, never whatever matches later. One runner at a time
-- works an action, under a short lease on its row (runner_until, the database clock): a runner
-- that dies leaves the lease to expire, and the next one to ask carries on from the items still
-- pending. Each item ends done or skipped, with why.

CREATE TABLE "bulk_action" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "action" TEXT NOT NULL,
  "filter" JSONB NOT NULL,
  "reason" TEXT NOT NULL,
  "requested_by" TEXT NOT NULL,
  "client_key" TEXT NOT NULL,
  "total" INTEGER NOT NULL,
  "state" TEXT NOT NULL DEFAULT 'running',
  "runner_until" TIMESTAMPTZ(6),
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "finished_at" TIMESTAMPTZ(6),
  CONSTRAINT "bulk_action_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "bulk_action_action" CHECK ("action" IN ('cancel', 'rerun')),
  CONSTRAINT "bulk_action_state" CHECK ("state" IN ('running', 'finished'))
);
-- The same start sent twice (a retried POST) is one action.
CREATE UNIQUE INDEX "bulk_action_requested_by_client_key_key" ON "bulk_action"("requested_by", "client_key");

CREATE TABLE "bulk_action_item" (
  "bulk_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "position" INTEGER NOT NULL,
  "state" TEXT NOT NULL DEFAULT 'pending',
  "detail" TEXT,
  "done_at" TIMESTAMPTZ(6),
  CONSTRAINT "bulk_action_item_pkey" PRIMARY KEY ("bulk_id", "workflow_id"),
  CONSTRAINT "bulk_action_item_state" CHECK ("state" IN ('pending', 'done', 'skipped')),
  CONSTRAINT "bulk_action_item_bulk_id_fkey" FOREIGN KEY ("bulk_id") REFERENCES "bulk_action"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "bulk_action_item_bulk_id_position_idx" ON "bulk_action_item"("bulk_id", "position");
