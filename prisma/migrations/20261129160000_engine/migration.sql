-- Fenceline engine schema.
--
-- Everything that decides authority (claim, renew, checkpoint, receipt, recovery) is judged by
-- this database's clock. History tables are append-only (trigger at the end). Constraints that
-- Prisma cannot express live here: one open lease per step, one open review case per step,
-- CHECKs on terms and policies, and the append-only guard.

CREATE TYPE "workflow_status" AS ENUM ('active', 'completed', 'cancelled', 'failed');

CREATE TYPE "step_state" AS ENUM (
  'blocked', 'ready', 'leased',
  'completed', 'completed_without_effect', 'superseded', 'cancelled', 'rejected', 'failed',
  'indeterminate'
);

CREATE TYPE "attempt_mode" AS ENUM ('execute', 'retry_same_identity', 'status_query');

CREATE TYPE "attempt_checkpoint" AS ENUM (
  'created', 'identity_persisted', 'invocation_began', 'response_observed', 'receipt_committed'
);

CREATE TYPE "attempt_outcome" AS ENUM (
  'effect', 'no_action_needed', 'skip', 'failed', 'released', 'lease_lost'
);

CREATE TYPE "lease_end_reason" AS ENUM ('receipt', 'released', 'expired', 'revoked', 'failed');

CREATE TYPE "lease_event_kind" AS ENUM (
  'acquired', 'renewed', 'renewal_refused', 'expiry_observed', 'released', 'revoked'
);

CREATE TYPE "verification_method" AS ENUM (
  'direct_response', 'idempotent_replay', 'status_query', 'manual_review', 'no_action_needed'
);

CREATE TYPE "rejection_reason" AS ENUM (
  'superseded', 'not_owner', 'expired', 'revoked', 'lease_ended', 'epoch_stale',
  'workflow_inactive', 'checkpoint_order'
);

CREATE TYPE "recovery_trigger" AS ENUM ('lease_expired', 'attempt_failed', 'lease_revoked');

CREATE TYPE "recovery_category" AS ENUM (
  'make_ready', 'retry_same_identity', 'retry_same_key', 'status_query', 'review',
  'reconcile', 'acknowledge', 'give_up'
);

CREATE TYPE "review_status" AS ENUM ('open', 'resolved');

CREATE TYPE "review_resolution" AS ENUM ('confirm_delivered', 'confirm_not_delivered', 'abandon');

-- Epochs are the first half of the fencing term (epoch, version). A new one opens after a
-- restore or reset; they are never reused.
CREATE TABLE "epoch" (
  "id" BIGINT NOT NULL,
  "opened_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "reason" TEXT NOT NULL,
  CONSTRAINT "epoch_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "epoch_id_positive" CHECK ("id" > 0)
);

INSERT INTO "epoch" ("id", "reason") VALUES (1, 'initial');

-- Liveness only: never evidence of what an external system did.
CREATE TABLE "worker_session" (
  "id" UUID NOT NULL,
  "host" TEXT NOT NULL,
  "pid" INTEGER NOT NULL,
  "transport" TEXT NOT NULL,
  "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "last_heartbeat_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "stopped_at" TIMESTAMPTZ(6),
  "stop_reason" TEXT,
  CONSTRAINT "worker_session_pkey" PRIMARY KEY ("id")
);

-- A step class is a lease policy. Changing a policy bumps policy_version, which stops
-- renewals of leases granted under the old one.
CREATE TABLE "step_class" (
  "name" TEXT NOT NULL,
  "lease_ttl_ms" INTEGER NOT NULL,
  "renew_every_ms" INTEGER NOT NULL,
  "attempt_deadline_ms" INTEGER NOT NULL,
  "grace_ms" INTEGER NOT NULL,
  "policy_version" INTEGER NOT NULL DEFAULT 1,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "step_class_pkey" PRIMARY KEY ("name"),
  CONSTRAINT "step_class_renew_before_expiry" CHECK ("renew_every_ms" > 0 AND "renew_every_ms" < "lease_ttl_ms"),
  CONSTRAINT "step_class_grace_inside_deadline" CHECK ("grace_ms" >= 0 AND "grace_ms" < "attempt_deadline_ms")
);

INSERT INTO "step_class" ("name", "lease_ttl_ms", "renew_every_ms", "attempt_deadline_ms", "grace_ms") VALUES
  ('pure',     5000,  1500,  30000, 1000),
  ('external', 10000, 3000, 120000, 2000);

CREATE TABLE "workflow" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "kind" TEXT NOT NULL,
  "input" JSONB NOT NULL,
  "input_digest" TEXT NOT NULL,
  "input_version" INTEGER NOT NULL DEFAULT 1,
  "requester" TEXT NOT NULL,
  "tracking_token" TEXT NOT NULL,
  "idempotency_key" TEXT,
  "status" "workflow_status" NOT NULL DEFAULT 'active',
  "status_reason" TEXT,
  "steps_remaining" INTEGER NOT NULL,
  "deadline_at" TIMESTAMPTZ(6),
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "workflow_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "workflow_steps_remaining_nonnegative" CHECK ("steps_remaining" >= 0)
);

CREATE UNIQUE INDEX "workflow_tracking_token_key" ON "workflow"("tracking_token");
CREATE UNIQUE INDEX "workflow_idempotency_key_key" ON "workflow"("idempotency_key");
CREATE INDEX "workflow_created_at_id_idx" ON "workflow"("created_at", "id");

-- fencing_term is the version half of the current lease's term: it only grows, by one per claim.
CREATE TABLE "step" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "workflow_id" UUID NOT NULL,
  "name" TEXT NOT NULL,
  "position" INTEGER NOT NULL,
  "adapter" TEXT NOT NULL,
  "operation" TEXT NOT NULL,
  "step_class" TEXT NOT NULL,
  "input" JSONB NOT NULL,
  "input_digest" TEXT NOT NULL,
  "state" "step_state" NOT NULL,
  "fencing_term" BIGINT NOT NULL DEFAULT 0,
  "pending_dependencies" INTEGER NOT NULL DEFAULT 0,
  "attempt_budget" INTEGER NOT NULL,
  "attempts_started" INTEGER NOT NULL DEFAULT 0,
  "next_mode" "attempt_mode" NOT NULL DEFAULT 'execute',
  "next_eligible_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "request_identity" TEXT,
  "state_reason" TEXT,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "completed_at" TIMESTAMPTZ(6),
  CONSTRAINT "step_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "step_fencing_term_nonnegative" CHECK ("fencing_term" >= 0),
  CONSTRAINT "step_pending_dependencies_nonnegative" CHECK ("pending_dependencies" >= 0),
  CONSTRAINT "step_attempt_budget_positive" CHECK ("attempt_budget" > 0)
);

CREATE UNIQUE INDEX "step_workflow_id_name_key" ON "step"("workflow_id", "name");
CREATE INDEX "step_state_updated_at_id_idx" ON "step"("state", "updated_at", "id");
CREATE INDEX "step_request_identity_idx" ON "step"("request_identity");

ALTER TABLE "step" ADD CONSTRAINT "step_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "step" ADD CONSTRAINT "step_step_class_fkey" FOREIGN KEY ("step_class") REFERENCES "step_class"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The claim scan reads only ready steps, oldest eligibility first.
CREATE INDEX "step_ready_idx" ON "step"("next_eligible_at", "id") WHERE "state" = 'ready';

CREATE TABLE "step_dependency" (
  "step_id" UUID NOT NULL,
  "depends_on_step_id" UUID NOT NULL,
  CONSTRAINT "step_dependency_pkey" PRIMARY KEY ("step_id", "depends_on_step_id"),
  CONSTRAINT "step_dependency_not_self" CHECK ("step_id" <> "depends_on_step_id")
);

CREATE INDEX "step_dependency_depends_on_step_id_idx" ON "step_dependency"("depends_on_step_id");
ALTER TABLE "step_dependency" ADD CONSTRAINT "step_dependency_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "step_dependency" ADD CONSTRAINT "step_dependency_depends_on_step_id_fkey" FOREIGN KEY ("depends_on_step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One try of a step under one lease version.
CREATE TABLE "attempt" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "step_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "fencing_term" BIGINT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "owner_session_id" UUID NOT NULL,
  "mode" "attempt_mode" NOT NULL,
  "request_identity" TEXT,
  "input_digest" TEXT NOT NULL,
  "adapter_version" TEXT,
  "checkpoint" "attempt_checkpoint" NOT NULL DEFAULT 'created',
  "deadline_at" TIMESTAMPTZ(6) NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "invocation_began_at" TIMESTAMPTZ(6),
  "response_observed_at" TIMESTAMPTZ(6),
  "external_reference" TEXT,
  "observed_result" JSONB,
  "outcome" "attempt_outcome",
  "outcome_reason" TEXT,
  "ended_at" TIMESTAMPTZ(6),
  CONSTRAINT "attempt_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "attempt_fencing_term_positive" CHECK ("fencing_term" > 0)
);

CREATE UNIQUE INDEX "attempt_step_id_fencing_term_key" ON "attempt"("step_id", "fencing_term");
ALTER TABLE "attempt" ADD CONSTRAINT "attempt_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Execution authority over one step, one row per fencing term. ended_at IS NULL marks the
-- open lease; whether it is still live is decided by expires_at against now().
CREATE TABLE "lease" (
  "step_id" UUID NOT NULL,
  "fencing_term" BIGINT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "workflow_id" UUID NOT NULL,
  "attempt_id" UUID NOT NULL,
  "owner_session_id" UUID NOT NULL,
  "policy_version" INTEGER NOT NULL,
  "leased_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "renewed_at" TIMESTAMPTZ(6),
  "expires_at" TIMESTAMPTZ(6) NOT NULL,
  "checkpoint_version" INTEGER NOT NULL DEFAULT 1,
  "ended_at" TIMESTAMPTZ(6),
  "end_reason" "lease_end_reason",
  CONSTRAINT "lease_pkey" PRIMARY KEY ("step_id", "fencing_term"),
  CONSTRAINT "lease_fencing_term_positive" CHECK ("fencing_term" > 0),
  CONSTRAINT "lease_expires_after_grant" CHECK ("expires_at" > "leased_at"),
  CONSTRAINT "lease_end_has_reason" CHECK (("ended_at" IS NULL) = ("end_reason" IS NULL))
);

ALTER TABLE "lease" ADD CONSTRAINT "lease_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "lease" ADD CONSTRAINT "lease_attempt_id_fkey" FOREIGN KEY ("attempt_id") REFERENCES "attempt"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Invariant 1: at most one open (current) lease per step.
CREATE UNIQUE INDEX "lease_one_open_per_step" ON "lease"("step_id") WHERE "ended_at" IS NULL;
-- The recovery scan reads open leases by expiry.
CREATE INDEX "lease_open_expires_at_idx" ON "lease"("expires_at") WHERE "ended_at" IS NULL;

CREATE TABLE "lease_event" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "step_id" UUID NOT NULL,
  "fencing_term" BIGINT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "owner_session_id" UUID NOT NULL,
  "kind" "lease_event_kind" NOT NULL,
  "reason" TEXT,
  "expires_at" TIMESTAMPTZ(6),
  "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "lease_event_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "lease_event_step_id_fencing_term_idx" ON "lease_event"("step_id", "fencing_term");
CREATE INDEX "lease_event_at_idx" ON "lease_event"("at");

-- The step's accepted conclusion. At most one per step (invariant 5).
CREATE TABLE "receipt" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "workflow_id" UUID NOT NULL,
  "step_id" UUID NOT NULL,
  "attempt_id" UUID,
  "input_digest" TEXT NOT NULL,
  "adapter_version" TEXT,
  "request_identity" TEXT,
  "external_reference" TEXT,
  "observed_result" JSONB,
  "verification_method" "verification_method" NOT NULL,
  "fencing_term" BIGINT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "receipt_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "receipt_step_id_key" ON "receipt"("step_id");
CREATE INDEX "receipt_external_reference_idx" ON "receipt"("external_reference");
ALTER TABLE "receipt" ADD CONSTRAINT "receipt_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Evidence from a worker whose lease is stale. Never mutates current state.
CREATE TABLE "late_observation" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "step_id" UUID NOT NULL,
  "attempt_id" UUID,
  "fencing_term" BIGINT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "operation" TEXT NOT NULL,
  "request_identity" TEXT,
  "external_reference" TEXT,
  "result" JSONB,
  "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "late_observation_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "late_observation_step_id_idx" ON "late_observation"("step_id");

CREATE TABLE "fencing_rejection" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "step_id" UUID NOT NULL,
  "operation" TEXT NOT NULL,
  "presented_term" BIGINT NOT NULL,
  "presented_epoch" BIGINT NOT NULL,
  "presented_owner" UUID NOT NULL,
  "current_term" BIGINT,
  "current_epoch" BIGINT NOT NULL,
  "reason" "rejection_reason" NOT NULL,
  "late_observation_id" BIGINT,
  "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "fencing_rejection_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "fencing_rejection_step_id_idx" ON "fencing_rejection"("step_id");
CREATE INDEX "fencing_rejection_at_idx" ON "fencing_rejection"("at");

CREATE TABLE "recovery_decision" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "step_id" UUID NOT NULL,
  "attempt_id" UUID NOT NULL,
  "fencing_term" BIGINT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "trigger" "recovery_trigger" NOT NULL,
  "category" "recovery_category" NOT NULL,
  "evidence" JSONB NOT NULL,
  "observed_expires_at" TIMESTAMPTZ(6) NOT NULL,
  "decided_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "decided_by" TEXT NOT NULL,
  CONSTRAINT "recovery_decision_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "recovery_decision_step_id_idx" ON "recovery_decision"("step_id");
CREATE INDEX "recovery_decision_decided_at_idx" ON "recovery_decision"("decided_at");

CREATE TABLE "review_case" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "step_id" UUID NOT NULL,
  "workflow_id" UUID NOT NULL,
  "reason" TEXT NOT NULL,
  "evidence" JSONB NOT NULL,
  "status" "review_status" NOT NULL DEFAULT 'open',
  "assignee" TEXT,
  "review_by" TIMESTAMPTZ(6) NOT NULL,
  "opened_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "resolution" "review_resolution",
  "resolved_by" TEXT,
  "resolved_at" TIMESTAMPTZ(6),
  "resolution_note" TEXT,
  "external_reference" TEXT,
  "version" INTEGER NOT NULL DEFAULT 1,
  CONSTRAINT "review_case_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "review_case_resolution_complete" CHECK (
    ("status" = 'open' AND "resolution" IS NULL AND "resolved_at" IS NULL)
    OR ("status" = 'resolved' AND "resolution" IS NOT NULL AND "resolved_at" IS NOT NULL AND "resolved_by" IS NOT NULL)
  )
);

CREATE INDEX "review_case_status_opened_at_id_idx" ON "review_case"("status", "opened_at", "id");
ALTER TABLE "review_case" ADD CONSTRAINT "review_case_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- At most one open review case per step.
CREATE UNIQUE INDEX "review_case_one_open_per_step" ON "review_case"("step_id") WHERE "status" = 'open';

-- The current epoch: the highest opened. STABLE so a statement reads it once.
CREATE FUNCTION "fl_current_epoch"() RETURNS BIGINT
  LANGUAGE sql STABLE
  AS $$ SELECT max("id") FROM "epoch" $$;

-- Why a fenced write for (step, term, owner) would be refused right now, or NULL if it would
-- not be. Used only to explain a refusal after the guarded statement matched no row; the guard
-- itself is always written out in the statement's WHERE clause.
CREATE FUNCTION "fl_authority_verdict"("p_step_id" UUID, "p_fencing_term" BIGINT, "p_owner" UUID)
  RETURNS TABLE (
    "reason" "rejection_reason",
    "current_term" BIGINT,
    "current_epoch" BIGINT,
    "presented_epoch" BIGINT,
    "attempt_id" UUID,
    "request_identity" TEXT
  )
  LANGUAGE sql STABLE
  AS $$
  SELECT
    CASE
      WHEN l."step_id" IS NULL OR s."fencing_term" > p_fencing_term THEN 'superseded'
      WHEN l."owner_session_id" <> p_owner THEN 'not_owner'
      WHEN l."ended_at" IS NOT NULL THEN
        CASE l."end_reason" WHEN 'expired' THEN 'expired' WHEN 'revoked' THEN 'revoked' ELSE 'lease_ended' END
      WHEN l."epoch" <> fl_current_epoch() THEN 'epoch_stale'
      WHEN l."expires_at" <= now() THEN 'expired'
      WHEN w."status" <> 'active' THEN 'workflow_inactive'
    END::"rejection_reason",
    s."fencing_term",
    fl_current_epoch(),
    coalesce(l."epoch", fl_current_epoch()),
    l."attempt_id",
    a."request_identity"
  FROM "step" s
  JOIN "workflow" w ON w."id" = s."workflow_id"
  LEFT JOIN "lease" l ON l."step_id" = s."id" AND l."fencing_term" = p_fencing_term
  LEFT JOIN "attempt" a ON a."id" = l."attempt_id"
  WHERE s."id" = p_step_id
$$;

-- Workers LISTEN on this channel so a step that becomes ready is picked up without polling.
-- Notifications with the same payload collapse within a transaction.
CREATE FUNCTION "fl_notify_step_ready"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM pg_notify('fenceline_step_ready', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER "step_ready_notify" AFTER INSERT OR UPDATE OF "state" ON "step"
  FOR EACH ROW WHEN (NEW."state" = 'ready') EXECUTE FUNCTION "fl_notify_step_ready"();

-- History is append-only: rows may be inserted, never changed. Deletion is allowed only to the
-- retention job, which sets fenceline.retention = 'on' for its own transaction.
CREATE FUNCTION "fl_forbid_history_change"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('fenceline.retention', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER "lease_event_append_only" BEFORE UPDATE OR DELETE ON "lease_event"
  FOR EACH ROW EXECUTE FUNCTION "fl_forbid_history_change"();
CREATE TRIGGER "late_observation_append_only" BEFORE UPDATE OR DELETE ON "late_observation"
  FOR EACH ROW EXECUTE FUNCTION "fl_forbid_history_change"();
CREATE TRIGGER "fencing_rejection_append_only" BEFORE UPDATE OR DELETE ON "fencing_rejection"
  FOR EACH ROW EXECUTE FUNCTION "fl_forbid_history_change"();
CREATE TRIGGER "recovery_decision_append_only" BEFORE UPDATE OR DELETE ON "recovery_decision"
  FOR EACH ROW EXECUTE FUNCTION "fl_forbid_history_change"();
-- Receipts are safety state: never changed, never pruned.
CREATE FUNCTION "fl_forbid_receipt_change"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  RAISE EXCEPTION 'receipt is permanent: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER "receipt_permanent" BEFORE UPDATE OR DELETE ON "receipt"
  FOR EACH ROW EXECUTE FUNCTION "fl_forbid_receipt_change"();
