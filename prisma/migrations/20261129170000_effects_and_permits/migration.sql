-- What an attempt learned about its effect, and adapter permits.
--
-- observed_effect keeps "the destination told us nothing happened" apart from "we never heard
-- back": an absent effect may be retried safely, an unknown one is decided by the adapter's
-- contract. Adapter permits are a short lease on destination capacity, taken just before an
-- invocation; one whose outcome is unknown stays held, because the call may still be running at
-- the destination.

CREATE TYPE "effect_observation" AS ENUM ('present', 'absent');

ALTER TABLE "attempt" ADD COLUMN "observed_effect" "effect_observation";

CREATE TYPE "permit_state" AS ENUM ('active', 'held', 'released');

-- Permits in use per adapter and operation class. Acquiring increments in_use under its limit
-- in one INSERT … ON CONFLICT DO UPDATE … WHERE, so concurrent acquirers never overshoot.
CREATE TABLE "adapter_capacity" (
  "adapter" TEXT NOT NULL,
  "operation_class" TEXT NOT NULL,
  "in_use" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "adapter_capacity_pkey" PRIMARY KEY ("adapter", "operation_class"),
  CONSTRAINT "adapter_capacity_in_use_nonnegative" CHECK ("in_use" >= 0)
);

CREATE TABLE "adapter_permit" (
  "id" UUID NOT NULL DEFAULT gen_random_uuid(),
  "adapter" TEXT NOT NULL,
  "operation_class" TEXT NOT NULL,
  "step_id" UUID NOT NULL,
  "attempt_id" UUID NOT NULL,
  "fencing_term" BIGINT NOT NULL,
  "request_identity" TEXT,
  "state" "permit_state" NOT NULL DEFAULT 'active',
  "acquired_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "expires_at" TIMESTAMPTZ(6) NOT NULL,
  "held_until" TIMESTAMPTZ(6),
  "held_reason" TEXT,
  "released_at" TIMESTAMPTZ(6),
  CONSTRAINT "adapter_permit_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "adapter_permit_released_at" CHECK (("state" = 'released') = ("released_at" IS NOT NULL)),
  CONSTRAINT "adapter_permit_held_until" CHECK ("state" <> 'held' OR "held_until" IS NOT NULL)
);

CREATE INDEX "adapter_permit_step_id_idx" ON "adapter_permit"("step_id");
-- The sweep reads permits that still count against capacity.
CREATE INDEX "adapter_permit_unreleased_idx" ON "adapter_permit"("expires_at") WHERE "state" <> 'released';
ALTER TABLE "adapter_permit" ADD CONSTRAINT "adapter_permit_step_id_fkey" FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
