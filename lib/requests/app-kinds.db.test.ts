/**
 * An app key may be limited to the kinds its app starts. A create of another kind is refused as
 * unknown, and `UnknownKindError` lists only the kinds that app may start — never every kind on
 * the server (another team's workflows stay unnamed). A key without a limit starts, and is told
 * of, every registered kind. Nothing is written by a refusal.
 */
import { afterAll, expect } from "vitest";
import { z } from "zod";
import { createClient, UnknownKindError } from "fenceline/client";
import { createAppKey } from "@/lib/auth/app-keys";
import { dbTest as test } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { done } from "@/lib/definitions/outcome";
import { registrationOf } from "@/lib/definitions/registration";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { registerDefinitions } from "@/lib/engine/registration";
import { registerSession } from "@/lib/engine/session";
import { routeFetch } from "@/lib/requests/test-support";

const milestone = { upcoming: "Soon", current: "Now", done: "Done" };
const kind = (name: string) => defineWorkflow({ kind: name, version: 1, input: z.object({ id: z.string() }) }).step("only", { milestone, run: async () => done() });

afterAll(async () => {
  await pool().end();
});

const refusalOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => error);

test("a key limited to its kinds is told of those only; another kind is unknown to it, and nothing is written", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  await registerDefinitions(db.pool, await registerSession(db.pool, "direct"), registrationOf([kind("order"), kind("refund"), kind("payroll")]));
  const shop = createClient({ url: "http://fenceline.test", apiKey: (await createAppKey(db.pool, "shop", ["requests:create"], "admin@test", { kinds: ["order", "refund"] })).key, fetch: routeFetch });
  const ops = createClient({ url: "http://fenceline.test", apiKey: (await createAppKey(db.pool, "ops", ["requests:create"], "admin@test")).key, fetch: routeFetch });

  expect((await shop.requests.create("order", { id: "o-1" })).kind).toBe("order");
  const typo = await refusalOf(shop.requests.create("ordr", { id: "o-1" }));
  expect(typo).toBeInstanceOf(UnknownKindError);
  expect((typo as UnknownKindError).kinds.map((known) => known.kind)).toEqual(["order", "refund"]);
  expect((typo as UnknownKindError).message).not.toMatch(/payroll/);
  // Registered, but not this app's: the same refusal as a kind that does not exist.
  const other = await refusalOf(shop.requests.create("payroll", { id: "p-1" }));
  expect(other).toBeInstanceOf(UnknownKindError);
  expect((other as UnknownKindError).kinds.map((known) => known.kind)).toEqual(["order", "refund"]);

  const unlimited = await refusalOf(ops.requests.create("ordr", { id: "o-1" }));
  expect((unlimited as UnknownKindError).kinds.map((known) => known.kind)).toEqual(["order", "payroll", "refund"]);
  expect((await ops.requests.create("payroll", { id: "p-2" })).kind).toBe("payroll");
  const { rows } = await db.pool.query<{ kind: string }>("SELECT kind FROM workflow ORDER BY kind");
  expect(rows.map((row) => row.kind)).toEqual(["order", "payroll"]);
});

test("an admin limits a key to kinds by name; a malformed kind is refused naming the field", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  const key = await createAppKey(db.pool, "shop", ["requests:create"], "admin@test", { kinds: ["refund", "order", "order"] });
  expect(key.kinds).toEqual(["order", "refund"]);
  const { createAppKeyBody } = await import("@/lib/api/contract/staff");
  const parsed = createAppKeyBody.safeParse({ app: "shop", scopes: ["requests:create"], kinds: ["Order Now!"] });
  expect(parsed.success).toBe(false);
  expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toEqual(["kinds.0"]);
});
