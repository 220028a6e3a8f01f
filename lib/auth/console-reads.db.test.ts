/**
 * The console's model reads, now Prisma queries (decision 011), answer what the named SQL they
 * replaced answered: accounts by email with their roles in order (none for an account without
 * one), credential lists newest first with their revocations and never a hash, and the audit log
 * newest first in keyset pages that neither skip nor repeat an entry. The writes stay SQL: the
 * times read back are the database clock's.
 */
import { expect } from "vitest";
import { readAuditPage } from "@/lib/audit/log";
import { dbTest as test } from "@/lib/db/test-database";
import { createAccount, listAccounts, setRoles } from "./accounts";
import { createAppKey, listAppKeys, revokeAppKey } from "./app-keys";
import { createScrapeToken, listScrapeTokens } from "./scrape-tokens";
import { createWorkerToken, listWorkerTokens, revokeWorkerToken } from "./worker-tokens";

test("accounts come by email, each with its roles in order; an account without a role has none", async ({ db }) => {
  const zoe = await createAccount(db.pool, { email: "Zoe@Example.test", name: "Zoe", password: "a long enough password", roles: ["support"] }, "admin@test");
  await createAccount(db.pool, { email: "abe@example.test", name: "Abe", password: "a long enough password", roles: [] }, "admin@test");
  await setRoles(db.pool, zoe.id, ["support", "admin", "engineer"], "admin@test");
  const { rows } = await db.pool.query<{ created_at: Date }>("SELECT created_at FROM auth_user WHERE id = $1", [zoe.id]);

  expect(await listAccounts(db.prisma)).toEqual([
    { id: expect.any(String), email: "abe@example.test", name: "Abe", roles: [], createdAt: expect.any(String) },
    { id: zoe.id, email: "zoe@example.test", name: "Zoe", roles: ["support", "engineer", "admin"], createdAt: rows[0]!.created_at.toISOString() },
  ]);
});

test("credential lists come newest first, with who created and revoked them, and never a hash", async ({ db }) => {
  const first = await createWorkerToken(db.pool, "edge-1", "admin@test");
  const second = await createWorkerToken(db.pool, "edge-2", "admin@test");
  await revokeWorkerToken(db.pool, first.id, "other-admin@test");
  const tokens = await listWorkerTokens(db.prisma);
  expect(tokens.map((token) => [token.id, token.workerName, token.revokedBy])).toEqual([
    [second.id, "edge-2", null],
    [first.id, "edge-1", "other-admin@test"],
  ]);
  const { rows } = await db.pool.query<{ revoked_at: Date }>("SELECT revoked_at FROM worker_token WHERE id = $1", [first.id]);
  expect(tokens[1]!.revokedAt).toBe(rows[0]!.revoked_at.toISOString());

  const key = await createAppKey(db.pool, "shop", ["requests:read", "requests:create"], "admin@test");
  await revokeAppKey(db.pool, key.id, "admin@test");
  const { key: secret, ...record } = key;
  expect(secret).toMatch(/^fl_app_/);
  expect(await listAppKeys(db.prisma)).toEqual([{ ...record, revokedAt: expect.any(String), revokedBy: "admin@test" }]);

  const scrape = await createScrapeToken(db.pool, "prometheus", "admin@test");
  expect(await listScrapeTokens(db.prisma)).toEqual([{ id: scrape.id, name: "prometheus", createdAt: scrape.createdAt, createdBy: "admin@test", revokedAt: null, revokedBy: null, lastUsedAt: null }]);

  const serialised = JSON.stringify([tokens, await listAppKeys(db.prisma), await listScrapeTokens(db.prisma)]);
  expect(serialised).not.toMatch(/sha256|[0-9a-f]{64}/i);
  for (const secret of [first.token, second.token, key.key, scrape.token]) expect(serialised).not.toContain(secret);
});

test("the audit log reads newest first in pages that neither skip nor repeat an entry", async ({ db }) => {
  const { rows } = await db.pool.query<{ id: string }>("SELECT id::text FROM audit_log ORDER BY id DESC");
  const pages: string[][] = [];
  let before: string | null = null;
  do {
    const page = await readAuditPage(db.prisma, before, 3);
    pages.push(page.items.map((item) => item.id));
    before = page.nextCursor;
  } while (before !== null);
  expect(rows.length).toBeGreaterThan(6);
  expect(pages.flat()).toEqual(rows.map((row) => row.id));
  expect(pages.slice(0, -1).every((page) => page.length === 3)).toBe(true);

  const [newest] = (await readAuditPage(db.prisma, null, 1)).items;
  expect(newest).toMatchObject({ actor: "admin@test", action: "scrape_token.created", subjectType: "scrape_token", before: null, after: { name: "prometheus" } });
  expect(newest!.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});
