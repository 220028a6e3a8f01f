-- Retention on a schedule (docs/decisions/017-history-by-partition-and-reads-off-the-primary.md).
-- Every coordinator (the web app for HTTP workers, each direct worker) offers to run the retention
-- job; one row per job says when a run last began, by the database clock, and the guarded update
-- that claims a run (lib/engine/sql/retention.ts claimScheduledRun) lets one process at a time,
-- once per interval, do it. A failed run clears its claim so the next offer retries.
CREATE TABLE "maintenance_run" (
  "job" TEXT NOT NULL,
  "started_at" TIMESTAMPTZ(6),
  "finished_at" TIMESTAMPTZ(6),
  "report" JSONB,
  CONSTRAINT "maintenance_run_pkey" PRIMARY KEY ("job")
);

INSERT INTO "maintenance_run" ("job") VALUES ('retention');
