-- What a step costs (docs/decisions/007-what-a-step-costs.md). Nothing reads outbox events by
-- request: the relay reads unprepared ones by age (outbox_event_unprepared_idx) and deliveries
-- reach their event by primary key. The index on workflow_id took an entry at each event's
-- insert (every completed, cancelled or reviewed request) and again at its preparation, which
-- moves the row (its prepared_at is in the unprepared index's predicate, so that update is never
-- HOT). No foreign key needs it: none references workflow from this table.
DROP INDEX "outbox_event_workflow_id_idx";
