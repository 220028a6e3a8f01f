-- A transaction may send its step-ready notification after it commits instead of with it
-- (docs/decisions/028-event-sends-notify-after-commit.md). NOTIFY takes one cluster-wide lock at
-- commit and holds it through the commit's WAL flush, so transactions that notify commit one
-- flush at a time; an event send, one transaction per event, sets `fenceline.step_ready_notify`
-- to 'after_commit' for its transaction and notifies in one of its own, which waits for no flush.
CREATE OR REPLACE FUNCTION "fl_notify_step_ready"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('fenceline.step_ready_notify', true) IS DISTINCT FROM 'after_commit' THEN
    PERFORM pg_notify('fenceline_step_ready', '');
  END IF;
  RETURN NULL;
END
$$;
