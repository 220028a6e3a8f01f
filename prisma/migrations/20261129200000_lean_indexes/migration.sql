-- Indexes for the metrics' time ranges that cost the write path next to nothing, and one fewer
-- index on step. History and receipt rows are written in time order and never updated, so a BRIN
-- index (one summary per 128 pages) finds a range as well as a B-tree does for the metrics' reads,
-- while an insert touches it only when its page range is first summarised.

-- Nothing looks a step up by its request identity (attempts, receipts and the destinations carry
-- it); every claim that set it paid for an index insertion.
DROP INDEX "step_request_identity_idx";

-- A lease's events are written over its lifetime, so neighbouring rows differ by up to a lease's
-- length: summaries of 16 pages (about 1,100 events) keep a one-hour read to the pages it needs.
DROP INDEX "lease_event_at_idx";
CREATE INDEX "lease_event_at_idx" ON "lease_event" USING brin ("at") WITH (pages_per_range = 16);

CREATE INDEX "receipt_created_at_idx" ON "receipt" USING brin ("created_at");

CREATE INDEX "late_observation_at_idx" ON "late_observation" ("at");

-- When a step was told of a reference by an attempt: the response, else the attempt's end, else
-- its start (the expression the duplicate-reference metric ranks sightings by). A row updated in
-- an old page widens that page range's summary: reads stay exact, and stay fast while most rows
-- land in time order, as appended and updated attempts do.
CREATE INDEX "attempt_reference_seen_at_idx" ON "attempt" USING brin ((coalesce("response_observed_at", "ended_at", "created_at")));

-- Room in each page for a row's new version beside the old one, so an update that changes no
-- B-tree-indexed column (an attempt concluding, a workflow counting down its steps) is HOT: it
-- writes no index entries at all.
ALTER TABLE "attempt" SET (fillfactor = 80);
ALTER TABLE "workflow" SET (fillfactor = 80);
