/**
 * Demo traffic against real PostgreSQL: it creates delivery workflows at about the configured
 * rate, each under its own idempotency key, and creates none after stop().
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, test as unitTest } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { DEFAULT_DELIVERY_MIX, parseDeliveryMix, pickDeliverVia, startDemoTraffic } from "./traffic";

const workflows = async (pool: import("pg").Pool) =>
  (await pool.query<{ kind: string; idempotency_key: string; requester: string }>("SELECT kind, idempotency_key, requester FROM workflow")).rows;

test("creates workflows at about the configured rate and stops cleanly", async ({ db }) => {
  const lines: string[] = [];
  const startedAt = Date.now();
  const traffic = startDemoTraffic({ pool: db.pool, ratePerMinute: 1_200, log: (line) => lines.push(line) });
  await sleep(1_500);
  await traffic.stop();
  const elapsedMs = Date.now() - startedAt;

  // 20 per second, the first at once: about 31 in 1.5 s. A loaded machine may fall behind, never ahead.
  const ceiling = Math.floor(elapsedMs / 50) + 1;
  expect(traffic.created()).toBeLessThanOrEqual(ceiling);
  expect(traffic.created()).toBeGreaterThanOrEqual(ceiling * 0.6);

  const rows = await workflows(db.pool);
  expect(rows).toHaveLength(traffic.created());
  expect(new Set(rows.map((row) => row.idempotency_key)).size).toBe(rows.length);
  expect(rows.every((row) => row.kind === "delivery" && row.requester === "demo-traffic")).toBe(true);
  expect(lines).toHaveLength(rows.length);
  expect(lines[0]).toMatch(/^created delivery \S+ via (idempotent|queryable|opaque) \(key demo-[0-9a-f]{8}-1\) \/track\/\S+$/);

  await sleep(300);
  expect(await workflows(db.pool)).toHaveLength(rows.length);
});

describe("delivery mix", () => {
  unitTest("parses weights and picks by them", () => {
    const mix = parseDeliveryMix("queryable=1, opaque=3");
    expect(mix).toEqual({ idempotent: 0, queryable: 1, opaque: 3 });
    expect([0, 0.24, 0.25, 0.99].map((draw) => pickDeliverVia(mix, () => draw))).toEqual(["queryable", "queryable", "opaque", "opaque"]);
    expect(parseDeliveryMix(undefined)).toBe(DEFAULT_DELIVERY_MIX);
  });

  unitTest.each(["email=1", "idempotent", "idempotent=-1", "opaque=0"])("refuses %j", (text) => {
    expect(() => parseDeliveryMix(text)).toThrow(/FENCELINE_DEMO_MIX/);
  });
});
