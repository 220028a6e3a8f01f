-- The audit log: who did what to which subject, when (database clock), with the state before
-- and after. Written in the same transaction as the change it records. Strictly append-only:
-- unlike the engine's history tables, not even the retention job may delete from it.

CREATE TABLE "audit_log" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "actor" TEXT NOT NULL,
  "action" TEXT NOT NULL,
  "subject_type" TEXT NOT NULL,
  "subject_id" TEXT NOT NULL,
  "before" JSONB,
  "after" JSONB,
  CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

CREATE FUNCTION "fl_forbid_audit_change"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION "fl_forbid_audit_change"();
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION "fl_forbid_audit_change"();
