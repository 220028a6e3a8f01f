-- Epoch transitions and destination blocks.
--
-- After a restore or reset, term ordering is uncertain. A transition stops new claims, reconciles
-- in-flight work, opens a new epoch and installs it at every fenced destination. While a
-- transition is open no step is claimed; a fenced destination whose installation failed stays
-- blocked until a later transition installs it.

CREATE TABLE "epoch_transition" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "from_epoch" BIGINT NOT NULL,
  "to_epoch" BIGINT,
  "reason" TEXT NOT NULL,
  "requested_by" TEXT NOT NULL,
  "state" TEXT NOT NULL DEFAULT 'stopping',
  "destinations" JSONB NOT NULL DEFAULT '{}',
  "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "finished_at" TIMESTAMPTZ(6),
  CONSTRAINT "epoch_transition_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "epoch_transition_state" CHECK ("state" IN ('stopping', 'reconciling', 'installing', 'completed', 'blocked', 'failed')),
  CONSTRAINT "epoch_transition_finished" CHECK (("finished_at" IS NULL) = ("state" IN ('stopping', 'reconciling', 'installing')))
);

-- At most one transition in progress.
CREATE UNIQUE INDEX "epoch_transition_one_open" ON "epoch_transition" ((true)) WHERE "finished_at" IS NULL;

CREATE TABLE "destination_block" (
  "adapter" TEXT NOT NULL,
  "epoch" BIGINT NOT NULL,
  "reason" TEXT NOT NULL,
  "since" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "destination_block_pkey" PRIMARY KEY ("adapter")
);
