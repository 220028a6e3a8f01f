-- Scrape tokens: how a Prometheus server reads /api/metrics/prometheus without a staff session.
-- A credential kind of its own, beside worker tokens and app keys, so none is accepted as
-- another; it reads the exposition and nothing else. Stored only as SHA-256; revocable at once.

CREATE TABLE "scrape_token" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  -- Which scraper holds it (a Prometheus server, a job), for the admin who revokes it.
  "name" TEXT NOT NULL,
  "token_sha256" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "created_by" TEXT NOT NULL,
  "revoked_at" TIMESTAMPTZ(6),
  "revoked_by" TEXT,
  -- The database time of the last scrape it authenticated: whether anything still uses it.
  "last_used_at" TIMESTAMPTZ(6),
  CONSTRAINT "scrape_token_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "scrape_token_token_sha256_key" ON "scrape_token"("token_sha256");
