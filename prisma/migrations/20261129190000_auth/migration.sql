-- Staff accounts, their sessions and roles, and the HTTP worker protocol's bearer tokens.
--
-- The four auth_* tables are better-auth's (lib/auth/auth.ts maps its fields to these
-- snake_case columns): users, password credentials (scrypt hashes in auth_account.password),
-- sessions with their expiry, and verification values. Roles are Fenceline's own: a user may
-- hold several. Worker tokens are stored only as the SHA-256 of a 256-bit random value.

CREATE TABLE "auth_user" (
  "id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "email_verified" BOOLEAN NOT NULL,
  "image" TEXT,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "auth_user_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "auth_user_email_key" ON "auth_user"("email");

CREATE TABLE "auth_session" (
  "id" TEXT NOT NULL,
  "expires_at" TIMESTAMPTZ(6) NOT NULL,
  "token" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(6) NOT NULL,
  "ip_address" TEXT,
  "user_agent" TEXT,
  "user_id" TEXT NOT NULL,
  CONSTRAINT "auth_session_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "auth_session_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "auth_user"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "auth_session_token_key" ON "auth_session"("token");
CREATE INDEX "auth_session_user_id_idx" ON "auth_session"("user_id");

CREATE TABLE "auth_account" (
  "id" TEXT NOT NULL,
  "account_id" TEXT NOT NULL,
  "provider_id" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "access_token" TEXT,
  "refresh_token" TEXT,
  "id_token" TEXT,
  "access_token_expires_at" TIMESTAMPTZ(6),
  "refresh_token_expires_at" TIMESTAMPTZ(6),
  "scope" TEXT,
  "password" TEXT,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(6) NOT NULL,
  CONSTRAINT "auth_account_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "auth_account_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "auth_user"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "auth_account_user_id_idx" ON "auth_account"("user_id");

CREATE TABLE "auth_verification" (
  "id" TEXT NOT NULL,
  "identifier" TEXT NOT NULL,
  "value" TEXT NOT NULL,
  "expires_at" TIMESTAMPTZ(6) NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "auth_verification_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "auth_verification_identifier_idx" ON "auth_verification"("identifier");

CREATE TYPE "staff_role_name" AS ENUM ('support', 'engineer', 'admin');

CREATE TABLE "staff_role" (
  "user_id" TEXT NOT NULL,
  "role" "staff_role_name" NOT NULL,
  "granted_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "staff_role_pkey" PRIMARY KEY ("user_id", "role"),
  CONSTRAINT "staff_role_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "auth_user"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- A worker token names one worker identity; sessions registered with it are bound to it
-- (worker_session.worker_token_id), so a revoked token stops every session it opened.
CREATE TABLE "worker_token" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY,
  "worker_name" TEXT NOT NULL,
  "token_sha256" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "created_by" TEXT NOT NULL,
  "revoked_at" TIMESTAMPTZ(6),
  "revoked_by" TEXT,
  CONSTRAINT "worker_token_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "worker_token_sha256_hex" CHECK ("token_sha256" ~ '^[0-9a-f]{64}$'),
  CONSTRAINT "worker_token_revocation_complete" CHECK (("revoked_at" IS NULL) = ("revoked_by" IS NULL))
);
CREATE UNIQUE INDEX "worker_token_token_sha256_key" ON "worker_token"("token_sha256");

ALTER TABLE "worker_session" ADD COLUMN "worker_token_id" BIGINT;
ALTER TABLE "worker_session" ADD CONSTRAINT "worker_session_worker_token_id_fkey" FOREIGN KEY ("worker_token_id") REFERENCES "worker_token"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "worker_session_worker_token_id_idx" ON "worker_session"("worker_token_id");
