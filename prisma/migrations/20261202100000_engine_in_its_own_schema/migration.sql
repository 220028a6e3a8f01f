-- Fenceline's objects live in a schema of their own (FENCELINE_DB_SCHEMA, default "fenceline";
-- docs/decisions/008-the-engine-in-its-own-schema.md), so it can share a database with an
-- adopter's tables. Every migration runs with that schema alone as its search_path, so on a fresh
-- database the migrations above already created everything there, and this one changes nothing.
--
-- A database migrated before had everything in public. The migration runner (lib/db/migrate.mjs)
-- has already moved the migration history into the schema; this moves every other Fenceline
-- object that is still in public and not yet in the schema. Indexes, constraints, triggers and
-- identity sequences move with their tables; function bodies name tables unqualified and find
-- them through the search_path. With the schema set to public, nothing moves.
DO $$
DECLARE
  target text := current_schema();
  object_name text;
  fn regprocedure;
BEGIN
  IF target IS NULL OR target = 'public' THEN
    RETURN;
  END IF;

  FOREACH object_name IN ARRAY ARRAY[
    'epoch', 'worker_session', 'step_class', 'workflow', 'step', 'step_dependency', 'attempt', 'lease',
    'lease_event', 'receipt', 'late_observation', 'fencing_rejection', 'recovery_decision', 'review_case',
    'adapter_capacity', 'adapter_permit', 'epoch_transition', 'destination_block',
    'auth_user', 'auth_session', 'auth_account', 'auth_verification', 'staff_role', 'worker_token', 'audit_log'
  ] LOOP
    IF to_regclass(format('public.%I', object_name)) IS NOT NULL AND to_regclass(format('%I.%I', target, object_name)) IS NULL THEN
      EXECUTE format('ALTER TABLE public.%I SET SCHEMA %I', object_name, target);
    END IF;
  END LOOP;

  FOREACH object_name IN ARRAY ARRAY[
    'workflow_status', 'step_state', 'attempt_mode', 'attempt_checkpoint', 'attempt_outcome', 'lease_end_reason',
    'lease_event_kind', 'verification_method', 'rejection_reason', 'recovery_trigger', 'recovery_category',
    'review_status', 'review_resolution', 'effect_observation', 'permit_state', 'staff_role_name'
  ] LOOP
    IF EXISTS (SELECT 1 FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typname = object_name AND typtype = 'e')
       AND NOT EXISTS (SELECT 1 FROM pg_type WHERE typnamespace = target::regnamespace AND typname = object_name) THEN
      EXECUTE format('ALTER TYPE public.%I SET SCHEMA %I', object_name, target);
    END IF;
  END LOOP;

  FOR fn IN
    SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'public'::regnamespace
      AND p.proname IN ('fl_current_epoch', 'fl_notify_step_ready', 'fl_forbid_history_change',
                        'fl_forbid_receipt_change', 'fl_forbid_audit_change')
      AND NOT EXISTS (SELECT 1 FROM pg_proc q WHERE q.pronamespace = target::regnamespace AND q.proname = p.proname)
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET SCHEMA %I', fn, target);
  END LOOP;
END
$$;
