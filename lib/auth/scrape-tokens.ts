/**
 * Scrape tokens: the bearer credential of a Prometheus server. A token opens one door, reading
 * `/api/metrics/prometheus`, and no other: it is neither a staff session, a worker token nor an
 * app key, and no route but that one looks it up. The token itself (256 random bits behind a
 * `fl_scrape_` prefix) is shown once and stored only as its SHA-256. Revoking is immediate;
 * creation and revocation are audited in the same transaction, and each scrape it authenticates
 * stamps the token's last use on the database clock. Writes and the per-scrape check are named
 * SQL; the admin's list is a Prisma read (decision 011).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { appendAudit } from "@/lib/audit/log";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";

export type ScraperIdentity = { readonly tokenId: string; readonly name: string };
export type ScrapeTokenRecord = {
  id: string;
  name: string;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
  revokedBy: string | null;
  lastUsedAt: string | null;
};

type TokenRow = { id: string; name: string; created_at: Date; created_by: string; revoked_at: Date | null; revoked_by: string | null; last_used_at: Date | null };

export const SCRAPE_TOKEN_PREFIX = "fl_scrape_";
const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

const recordOf = (row: TokenRow): ScrapeTokenRecord => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
  revokedAt: row.revoked_at?.toISOString() ?? null,
  revokedBy: row.revoked_by,
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

const COLUMNS = `id::text, name, created_at, created_by, revoked_at, revoked_by, last_used_at`;

const sql = {
  install: {
    name: "scrape_token_install",
    text: `INSERT INTO scrape_token (name, token_sha256, created_by) VALUES ($1, $2, $3)
           ON CONFLICT (token_sha256) DO NOTHING
           RETURNING ${COLUMNS}`,
  },
  // Only an unrevoked token authenticates, looked up by its hash's index; the same statement
  // records the use, so identifying a scraper is one round trip.
  identify: {
    name: "scrape_token_identify",
    text: `UPDATE scrape_token SET last_used_at = now() WHERE token_sha256 = $1 AND revoked_at IS NULL RETURNING id::text AS token_id, name`,
  },
  revoke: {
    name: "scrape_token_revoke",
    text: `UPDATE scrape_token SET revoked_at = now(), revoked_by = $2 WHERE id = $1::bigint AND revoked_at IS NULL RETURNING ${COLUMNS}`,
  },
  byId: { name: "scrape_token_by_id", text: `SELECT ${COLUMNS} FROM scrape_token WHERE id = $1::bigint` },
} as const;

const LIST_LIMIT = 500;

/** Stores a new token for the scraper `name` and answers it once, with its record. */
export async function createScrapeToken(db: Pool, name: string, actor: string): Promise<ScrapeTokenRecord & { token: string }> {
  const token = `${SCRAPE_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  return inTransaction(db, async (client) => {
    const [row] = await run<TokenRow>(client, sql.install, [name, sha256(token), actor]);
    if (!row) throw new Error("createScrapeToken: a fresh 256-bit token collided with a stored one");
    const record = recordOf(row);
    await appendAudit(client, { actor, action: "scrape_token.created", subjectType: "scrape_token", subjectId: record.id, before: null, after: { name } });
    return { ...record, token };
  });
}

/** Revokes a token; revoking one already revoked answers it unchanged (no second audit entry). */
export async function revokeScrapeToken(db: Pool, id: string, actor: string): Promise<ScrapeTokenRecord> {
  return inTransaction(db, async (client) => {
    const [row] = await run<TokenRow>(client, sql.revoke, [id, actor]);
    if (!row) {
      const [existing] = await run<TokenRow>(client, sql.byId, [id]);
      if (!existing) throw new NotFoundError("scrape token", id);
      return recordOf(existing);
    }
    await appendAudit(client, {
      actor,
      action: "scrape_token.revoked",
      subjectType: "scrape_token",
      subjectId: id,
      before: { revokedAt: null },
      after: { revokedAt: row.revoked_at?.toISOString(), name: row.name },
    });
    return recordOf(row);
  });
}

/** The scraper an unrevoked token belongs to (recording this use), or null. */
export async function identifyScraper(db: Queryable, token: string): Promise<ScraperIdentity | null> {
  if (!token.startsWith(SCRAPE_TOKEN_PREFIX)) return null;
  const [row] = await run<{ token_id: string; name: string }>(db, sql.identify, [sha256(token)]);
  return row ? { tokenId: row.token_id, name: row.name } : null;
}

/** The newest tokens first (never their values). */
export async function listScrapeTokens(db: PrismaClient): Promise<ScrapeTokenRecord[]> {
  const tokens = await db.scrapeToken.findMany({
    select: { id: true, name: true, createdAt: true, createdBy: true, revokedAt: true, revokedBy: true, lastUsedAt: true },
    orderBy: { id: "desc" },
    take: LIST_LIMIT,
  });
  return tokens.map((token) => ({
    ...token,
    id: token.id.toString(),
    createdAt: token.createdAt.toISOString(),
    revokedAt: token.revokedAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
  }));
}
