-- Steps that wait (docs/decisions/019-steps-that-wait.md). A timer or event-wait step is armed by
-- an attempt like any step (its worker computes the due time or the correlation key), then parks:
-- the attempt ends, the step is `waiting`, and the wait's room keeps its record. Nothing holds a
-- lease or a permit meanwhile. The room settles the step (a receipt, verified by the database
-- clock or by an accepted event) or fails it; the completion is the one every receipt goes through.
-- These are the words; PostgreSQL cannot use an enum label in the transaction that adds it, so
-- the rooms' tables and triggers, which do, follow in 20261206100100_timers_and_events.

ALTER TYPE "step_state" ADD VALUE 'waiting' AFTER 'leased';
ALTER TYPE "attempt_outcome" ADD VALUE 'waiting' AFTER 'skip';
ALTER TYPE "verification_method" ADD VALUE 'database_clock';
ALTER TYPE "verification_method" ADD VALUE 'event_received';
