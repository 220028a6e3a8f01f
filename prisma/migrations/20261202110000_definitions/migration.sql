-- Workflow and adapter definitions, registered by the workers that serve them.
--
-- A worker registers, when it starts, the workflow versions it serves (kind, version, input JSON
-- Schema, step graph, milestone words) and the adapters their steps use (name, version and
-- contract). Requests are created from a registered version and pin it; recovery, review and the
-- end-user projection read an adapter's contract from here, beside the step they decide. A kind
-- and version, or an adapter name and version, keep one shape: the same name registered with
-- another shape is refused by the registration, not overwritten.

CREATE TYPE "repetition_policy" AS ENUM ('safe', 'idempotency_protected', 'reconcilable', 'prohibited');

CREATE TABLE "adapter_definition" (
  "name" TEXT NOT NULL,
  "version" TEXT NOT NULL,
  "external_effect" BOOLEAN NOT NULL,
  "idempotency_keys" BOOLEAN NOT NULL,
  "status_query" BOOLEAN NOT NULL,
  "fence_enforcement" BOOLEAN NOT NULL,
  "repetition" "repetition_policy" NOT NULL,
  "timeout_ms" INTEGER NOT NULL,
  "concurrency_limit" INTEGER NOT NULL,
  -- Where a fenced destination's epoch is administered; the latest registration's.
  "epoch_admin_url" TEXT,
  "registered_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "adapter_definition_pkey" PRIMARY KEY ("name", "version"),
  CONSTRAINT "adapter_definition_timeout_positive" CHECK ("timeout_ms" > 0),
  CONSTRAINT "adapter_definition_limit_positive" CHECK ("concurrency_limit" > 0),
  CONSTRAINT "adapter_definition_epoch_admin_fenced" CHECK ("epoch_admin_url" IS NULL OR "fence_enforcement")
);

-- The built-in adapter of pure steps: computation inside the worker, safe to repeat.
INSERT INTO "adapter_definition" ("name", "version", "external_effect", "idempotency_keys", "status_query", "fence_enforcement",
                                  "repetition", "timeout_ms", "concurrency_limit")
VALUES ('pure', '1', false, false, false, false, 'safe', 10000, 1000);

CREATE TABLE "workflow_definition" (
  "kind" TEXT NOT NULL,
  "version" INTEGER NOT NULL,
  "input_schema" JSONB NOT NULL,
  "title" TEXT,
  "deadline_ms" INTEGER,
  -- [{ name, class, attemptBudget, dependsOn, adapter, milestone }] in step order.
  "steps" JSONB NOT NULL,
  "registered_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "workflow_definition_pkey" PRIMARY KEY ("kind", "version"),
  CONSTRAINT "workflow_definition_version_positive" CHECK ("version" > 0),
  CONSTRAINT "workflow_definition_deadline_positive" CHECK ("deadline_ms" IS NULL OR "deadline_ms" > 0)
);

-- What each worker session serves: a step no live session serves holds no lease.
CREATE TABLE "worker_session_definition" (
  "session_id" UUID NOT NULL,
  "kind" TEXT NOT NULL,
  "version" INTEGER NOT NULL,
  CONSTRAINT "worker_session_definition_pkey" PRIMARY KEY ("session_id", "kind", "version")
);
CREATE INDEX "worker_session_definition_kind_version_idx" ON "worker_session_definition"("kind", "version");
ALTER TABLE "worker_session_definition" ADD CONSTRAINT "worker_session_definition_session_id_fkey"
  FOREIGN KEY ("session_id") REFERENCES "worker_session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "worker_session_definition" ADD CONSTRAINT "worker_session_definition_kind_version_fkey"
  FOREIGN KEY ("kind", "version") REFERENCES "workflow_definition"("kind", "version") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A request pins the version of its kind current when it was created.
ALTER TABLE "workflow" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "workflow" ADD CONSTRAINT "workflow_version_positive" CHECK ("version" > 0);

-- A step runs on one adapter version, fixed by its workflow's definition.
ALTER TABLE "step" ADD COLUMN "adapter_version" TEXT NOT NULL DEFAULT '1';

-- Every step reads its request's input; a step's own copy was never read apart from it.
ALTER TABLE "step" DROP COLUMN "input";
