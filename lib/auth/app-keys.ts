/**
 * App API keys: the credential an adopter's backend uses to create and read its requests
 * (`fenceline/client`). Each key belongs to an app and carries scopes; the key itself (256
 * random bits behind a `fl_app_` prefix) is shown once and stored only as its SHA-256. Revoking
 * is immediate: every request is checked against the table. Requests created with an app's key
 * are that app's, and its keys read only those. Creation and revocation are audited in the same
 * transaction. Writes and the per-call check are named SQL; the admin's list is a Prisma read
 * (decision 011).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { appendAudit } from "@/lib/audit/log";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { AppKeyScope } from "./app-key-scopes";


/** An app as its key identifies it: `kinds` are the kinds it may start (empty: every registered kind). */
export type AppIdentity = { readonly keyId: string; readonly app: string; readonly scopes: readonly AppKeyScope[]; readonly kinds: readonly string[] };
export type AppKeyRecord = {
  id: string;
  app: string;
  scopes: AppKeyScope[];
  /** The kinds the key may start; empty: every registered kind. */
  kinds: string[];
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
  revokedBy: string | null;
};

type KeyRow = { id: string; app: string; scopes: AppKeyScope[]; kinds: string[]; created_at: Date; created_by: string; revoked_at: Date | null; revoked_by: string | null };

const PREFIX = "fl_app_";
const sha256 = (key: string) => createHash("sha256").update(key, "utf8").digest("hex");

const recordOf = (row: KeyRow): AppKeyRecord => ({
  id: row.id,
  app: row.app,
  scopes: row.scopes,
  kinds: row.kinds,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
  revokedAt: row.revoked_at?.toISOString() ?? null,
  revokedBy: row.revoked_by,
});

const COLUMNS = `id::text, app, scopes, kinds, created_at, created_by, revoked_at, revoked_by`;

const sql = {
  install: {
    name: "app_key_install",
    text: `INSERT INTO app_key (app, key_sha256, scopes, created_by, kinds) VALUES ($1, $2, $3::text[], $4, $5::text[])
           ON CONFLICT (key_sha256) DO NOTHING
           RETURNING ${COLUMNS}`,
  },
  // Only an unrevoked key authenticates; the hash is an index lookup, not a comparison in code.
  identify: {
    name: "app_key_identify",
    text: `SELECT id::text AS key_id, app, scopes, kinds FROM app_key WHERE key_sha256 = $1 AND revoked_at IS NULL`,
  },
  revoke: {
    name: "app_key_revoke",
    text: `UPDATE app_key SET revoked_at = now(), revoked_by = $2 WHERE id = $1::bigint AND revoked_at IS NULL RETURNING ${COLUMNS}`,
  },
  byId: { name: "app_key_by_id", text: `SELECT ${COLUMNS} FROM app_key WHERE id = $1::bigint` },
} as const;

const LIST_LIMIT = 500;

/** What an app key may start besides its scopes: `kinds` (empty or absent: every registered kind). */
export type AppKeyLimits = { readonly kinds?: readonly string[] };

/** Stores `key` (its hash) for `app` with `scopes`; a key already stored is left as it is (null). */
export async function installAppKey(db: Pool, app: string, key: string, scopes: readonly AppKeyScope[], actor: string, limits: AppKeyLimits = {}): Promise<AppKeyRecord | null> {
  return inTransaction(db, async (client) => {
    const kinds = [...new Set(limits.kinds ?? [])].sort();
    const [row] = await run<KeyRow>(client, sql.install, [app, sha256(key), [...new Set(scopes)].sort(), actor, kinds]);
    if (!row) return null;
    const record = recordOf(row);
    await appendAudit(client, { actor, action: "app_key.created", subjectType: "app_key", subjectId: record.id, before: null, after: { app, scopes: record.scopes, kinds: record.kinds } });
    return record;
  });
}

export async function createAppKey(db: Pool, app: string, scopes: readonly AppKeyScope[], actor: string, limits: AppKeyLimits = {}): Promise<AppKeyRecord & { key: string }> {
  const key = `${PREFIX}${randomBytes(32).toString("base64url")}`;
  const record = await installAppKey(db, app, key, scopes, actor, limits);
  if (!record) throw new Error("createAppKey: a fresh 256-bit key collided with a stored one");
  return { ...record, key };
}

/** Revokes a key; revoking one already revoked answers it unchanged (no second audit entry). */
export async function revokeAppKey(db: Pool, id: string, actor: string): Promise<AppKeyRecord> {
  return inTransaction(db, async (client) => {
    const [row] = await run<KeyRow>(client, sql.revoke, [id, actor]);
    if (!row) {
      const [existing] = await run<KeyRow>(client, sql.byId, [id]);
      if (!existing) throw new NotFoundError("app key", id);
      return recordOf(existing);
    }
    await appendAudit(client, {
      actor,
      action: "app_key.revoked",
      subjectType: "app_key",
      subjectId: id,
      before: { revokedAt: null },
      after: { revokedAt: row.revoked_at?.toISOString(), app: row.app },
    });
    return recordOf(row);
  });
}

/** The app an unrevoked key belongs to, or null. */
export async function identifyApp(db: Queryable, key: string): Promise<AppIdentity | null> {
  if (!key.startsWith(PREFIX)) return null;
  const [row] = await run<{ key_id: string; app: string; scopes: AppKeyScope[]; kinds: string[] }>(db, sql.identify, [sha256(key)]);
  return row ? { keyId: row.key_id, app: row.app, scopes: row.scopes, kinds: row.kinds } : null;
}

/** The newest keys first (never their values). */
export async function listAppKeys(db: PrismaClient): Promise<AppKeyRecord[]> {
  const keys = await db.appKey.findMany({
    select: { id: true, app: true, scopes: true, kinds: true, createdAt: true, createdBy: true, revokedAt: true, revokedBy: true },
    orderBy: { id: "desc" },
    take: LIST_LIMIT,
  });
  return keys.map((key) => ({
    ...key,
    id: key.id.toString(),
    // The table's CHECK allows only known scopes.
    scopes: key.scopes as AppKeyScope[],
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
  }));
}

/** How an app appears as the requester of the requests it creates. */
export const requesterOf = (app: string): string => `app:${app}`;
