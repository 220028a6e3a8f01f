-- CreateTable
CREATE TABLE "outbox_event" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "type" TEXT NOT NULL,
    "workflow_id" UUID NOT NULL,
    "detail" JSONB,
    "body" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "prepared_at" TIMESTAMPTZ(6),

    CONSTRAINT "outbox_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_endpoint" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "url" TEXT NOT NULL,
    "event_types" TEXT[],
    "app" TEXT,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by" TEXT NOT NULL,
    "disabled_at" TIMESTAMPTZ(6),
    "disabled_by" TEXT,
    "failing_since" TIMESTAMPTZ(6),

    CONSTRAINT "webhook_endpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_delivery" (
    "id" BIGSERIAL NOT NULL,
    "event_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retrying_since" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_term" BIGINT NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(6),
    "last_status" INTEGER,
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempt" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" BIGINT NOT NULL,
    "lease_term" BIGINT NOT NULL,
    "relay" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(6),
    "status_code" INTEGER,
    "error" TEXT,
    "latency_ms" INTEGER,

    CONSTRAINT "webhook_attempt_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "outbox_event_workflow_id_idx" ON "outbox_event"("workflow_id");

-- CreateIndex
CREATE INDEX "webhook_delivery_endpoint_id_id_idx" ON "webhook_delivery"("endpoint_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_event_id_endpoint_id_key" ON "webhook_delivery"("event_id", "endpoint_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_attempt_delivery_id_lease_term_key" ON "webhook_attempt"("delivery_id", "lease_term");

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "outbox_event"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempt" ADD CONSTRAINT "webhook_attempt_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_delivery"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What Prisma cannot say: the vocabularies, and the indexes the relay's scans use.
ALTER TABLE "outbox_event" ADD CONSTRAINT "outbox_event_type_check" CHECK ("type" IN
  ('request.completed', 'request.needs_review', 'request.review_resolved', 'request.could_not_be_completed', 'request.cancelled'));
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_event_types_check" CHECK (cardinality("event_types") > 0);
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_state_check" CHECK ("state" IN ('pending', 'delivered', 'failed', 'dead_lettered'));
CREATE INDEX "outbox_event_unprepared_idx" ON "outbox_event"("created_at") WHERE "prepared_at" IS NULL;
CREATE INDEX "webhook_delivery_due_idx" ON "webhook_delivery"("next_attempt_at") WHERE "state" = 'pending';
