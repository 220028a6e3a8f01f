-- App API keys: how an adopter's backend creates and reads its requests. Distinct from worker
-- tokens (which run steps) and staff sessions (people): each credential kind has its own table,
-- so one can never be presented as another. Stored only as SHA-256; scoped; revocable at once.

CREATE TABLE "app_key" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  -- The app the key belongs to: requests it creates are the app's, and its keys read only those.
  "app" TEXT NOT NULL,
  "key_sha256" TEXT NOT NULL,
  "scopes" TEXT[] NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "created_by" TEXT NOT NULL,
  "revoked_at" TIMESTAMPTZ(6),
  "revoked_by" TEXT,
  CONSTRAINT "app_key_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "app_key_scopes_known" CHECK ("scopes" <@ ARRAY['requests:create', 'requests:read']::text[] AND cardinality("scopes") > 0)
);

CREATE UNIQUE INDEX "app_key_key_sha256_key" ON "app_key"("key_sha256");

-- An Idempotency-Key names one intent of one requester: two apps may use the same key.
DROP INDEX "workflow_idempotency_key_key";
CREATE UNIQUE INDEX "workflow_requester_idempotency_key_key" ON "workflow"("requester", "idempotency_key");
