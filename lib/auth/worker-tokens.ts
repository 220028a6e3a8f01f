/**
 * Worker tokens: the bearer credentials of the HTTP worker protocol. Each names one worker
 * identity; the token itself (256 random bits) is shown once and stored only as its SHA-256, so
 * a database dump yields no usable token. Revoking is immediate: the protocol server keeps a
 * token's identity for as long as the token is unrevoked (workerTokenCache), and every revocation
 * clears that cache in its own process at once and, by a NOTIFY sent with the revocation's commit,
 * in every other process that serves the protocol. Sessions stay bound to the token that
 * registered them. Creation and
 * revocation are audited in the same transaction. Writes and the per-call check are named SQL
 * (database clock, the audit entry's transaction, a hot path); the admin's list is a Prisma read
 * (decision 011).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { appendAudit } from "@/lib/audit/log";
import { createListener } from "@/lib/db/listener";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";

export type WorkerIdentity = { readonly tokenId: string; readonly workerName: string };
export type WorkerTokenRecord = { id: string; workerName: string; createdAt: string; createdBy: string; revokedAt: string | null; revokedBy: string | null };

type TokenRow = { id: string; worker_name: string; created_at: Date; created_by: string; revoked_at: Date | null; revoked_by: string | null };

const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

const recordOf = (row: TokenRow): WorkerTokenRecord => ({
  id: row.id,
  workerName: row.worker_name,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
  revokedAt: row.revoked_at?.toISOString() ?? null,
  revokedBy: row.revoked_by,
});

const COLUMNS = `id::text, worker_name, created_at, created_by, revoked_at, revoked_by`;

const REVOKED_CHANNEL = "fenceline_worker_token_revoked";

const sql = {
  install: {
    name: "worker_token_install",
    text: `INSERT INTO worker_token (worker_name, token_sha256, created_by) VALUES ($1, $2, $3)
           ON CONFLICT (token_sha256) DO NOTHING
           RETURNING ${COLUMNS}`,
  },
  // Only an unrevoked token authenticates; the hash is an index lookup, not a comparison in code.
  identify: {
    name: "worker_token_identify",
    text: `SELECT id::text AS token_id, worker_name FROM worker_token WHERE token_sha256 = $1 AND revoked_at IS NULL`,
  },
  revoke: {
    name: "worker_token_revoke",
    text: `UPDATE worker_token SET revoked_at = now(), revoked_by = $2 WHERE id = $1::bigint AND revoked_at IS NULL RETURNING ${COLUMNS}`,
  },
  // Delivered when the revocation commits, to every process that caches identities.
  announceRevocation: { name: "worker_token_announce_revocation", text: `SELECT pg_notify('${REVOKED_CHANNEL}', $1)` },
  byId: { name: "worker_token_by_id", text: `SELECT ${COLUMNS} FROM worker_token WHERE id = $1::bigint` },
} as const;

const LIST_LIMIT = 500;

/** Stores `token` (its hash) for `workerName`; a token already stored is left as it is. */
export async function installWorkerToken(db: Pool, workerName: string, token: string, actor: string): Promise<WorkerTokenRecord | null> {
  return inTransaction(db, async (client) => {
    const [row] = await run<TokenRow>(client, sql.install, [workerName, sha256(token), actor]);
    if (!row) return null;
    const record = recordOf(row);
    await appendAudit(client, { actor, action: "worker_token.created", subjectType: "worker_token", subjectId: record.id, before: null, after: { workerName } });
    return record;
  });
}

export async function createWorkerToken(db: Pool, workerName: string, actor: string): Promise<WorkerTokenRecord & { token: string }> {
  const token = randomBytes(32).toString("base64url");
  const record = await installWorkerToken(db, workerName, token, actor);
  if (!record) throw new Error("createWorkerToken: a fresh 256-bit token collided with a stored one");
  return { ...record, token };
}

/** Revokes a token; revoking one already revoked answers it unchanged (no second audit entry). */
export async function revokeWorkerToken(db: Pool, id: string, actor: string): Promise<WorkerTokenRecord> {
  return inTransaction(db, async (client) => {
    const [row] = await run<TokenRow>(client, sql.revoke, [id, actor]);
    if (!row) {
      const [existing] = await run<TokenRow>(client, sql.byId, [id]);
      if (!existing) throw new NotFoundError("worker token", id);
      return recordOf(existing);
    }
    await appendAudit(client, { actor, action: "worker_token.revoked", subjectType: "worker_token", subjectId: id, before: { revokedAt: null }, after: { revokedAt: row.revoked_at?.toISOString(), workerName: row.worker_name } });
    await run(client, sql.announceRevocation, [id]);
    return recordOf(row);
  }).finally(forgetInThisProcess);
}

export async function identifyWorker(db: Queryable, token: string): Promise<WorkerIdentity | null> {
  return identifyByHash(db, sha256(token));
}

async function identifyByHash(db: Queryable, hash: string): Promise<WorkerIdentity | null> {
  const [row] = await run<{ token_id: string; worker_name: string }>(db, sql.identify, [hash]);
  return row ? { tokenId: row.token_id, workerName: row.worker_name } : null;
}

/** Worker token identities known to be unrevoked, as the protocol server keeps them. */
export type WorkerTokenCache = {
  /** The token's identity, or null when it is unknown or revoked. */
  identify(token: string): Promise<WorkerIdentity | null>;
  /** Stops listening for revocations and forgets every identity. */
  close(): Promise<void>;
};

const MAX_CACHED_TOKENS = 10_000;
/** Every cache in this process, so a revocation made here clears them before it returns. */
const liveCaches = new Set<() => void>();

function forgetInThisProcess(): void {
  for (const forget of liveCaches) forget();
}

/**
 * Caches identities for as long as their tokens stay unrevoked, so a request costs no token query.
 * The cache is used only while it listens for revocations: a revocation clears it, in this
 * process before revokeWorkerToken returns, elsewhere when its NOTIFY arrives (it is sent with
 * the revocation's commit). While the listening connection is not there (not yet connected, or
 * lost and reconnecting) every request is checked against the table, and each time listening
 * starts again the cache is cleared, since a revocation may have been missed meanwhile. Anything
 * that clears the cache bumps `generation`, so an identity read before a revocation is never
 * stored after it. `listenPool` holds the LISTEN (lib/db/listener.ts): behind a pooler in
 * transaction mode it must be a direct pool, or notices never arrive.
 */
export function workerTokenCache(pool: Pool, listenPool: Pool = pool): WorkerTokenCache {
  const identities = new Map<string, WorkerIdentity>();
  let generation = 0;
  let closed = false;
  const forget = () => {
    generation += 1;
    identities.clear();
  };
  const revocations = createListener(listenPool, { channels: [REVOKED_CHANNEL], onNotification: forget, onListening: forget });
  liveCaches.add(forget);

  return {
    identify: async (token) => {
      const hash = sha256(token);
      const known = revocations.listening ? identities.get(hash) : undefined;
      if (known) return known;
      if (!closed) await revocations.ready();
      const seen = generation;
      const identity = await identifyByHash(pool, hash);
      if (identity && revocations.listening && seen === generation) {
        if (identities.size >= MAX_CACHED_TOKENS) identities.clear();
        identities.set(hash, identity);
      }
      return identity;
    },
    close: async () => {
      closed = true;
      liveCaches.delete(forget);
      forget();
      await revocations.close();
    },
  };
}

/** The newest tokens first (never their values). */
export async function listWorkerTokens(db: PrismaClient): Promise<WorkerTokenRecord[]> {
  const tokens = await db.workerToken.findMany({
    select: { id: true, workerName: true, createdAt: true, createdBy: true, revokedAt: true, revokedBy: true },
    orderBy: { id: "desc" },
    take: LIST_LIMIT,
  });
  return tokens.map((token) => ({ ...token, id: token.id.toString(), createdAt: token.createdAt.toISOString(), revokedAt: token.revokedAt?.toISOString() ?? null }));
}
