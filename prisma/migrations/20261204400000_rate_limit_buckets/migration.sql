-- Rate limits in the database instead of each web process's memory, so a limit holds whichever
-- replica answers (docs/decisions/016-several-web-replicas-and-a-pooler.md). One token bucket per
-- limiter and key (client address, account, app key); its tokens are as of updated_at, by the
-- database clock, and refill from there. A missing row is a full bucket, so rows whose bucket has
-- refilled are deleted without changing any answer.

CREATE TABLE "rate_limit_bucket" (
  "limiter" TEXT NOT NULL,
  "bucket_key" TEXT NOT NULL,
  "tokens" DOUBLE PRECISION NOT NULL,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "rate_limit_bucket_pkey" PRIMARY KEY ("limiter", "bucket_key")
);

-- The sweep of refilled buckets reads by age.
CREATE INDEX "rate_limit_bucket_limiter_updated_at_idx" ON "rate_limit_bucket"("limiter", "updated_at");
