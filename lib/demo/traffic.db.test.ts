/**
 * Demo traffic through the public client against the real API route and PostgreSQL: it creates
 * delivery requests at about the configured rate, each under its own idempotency key, and
 * creates none after stop().
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, test as unitTest } from "vitest";
import { createClient } from "fenceline/client";
import { installAppKey } from "@/lib/auth/app-keys";
import { dbTest as test } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { registerDelivery, routeFetch } from "@/lib/requests/test-support";
import { DEFAULT_DELIVERY_MIX, parseDeliveryMix, pickDeliverVia, startDemoTraffic } from "./traffic";

afterAll(async () => {
  await pool().end();
});

const workflows = async (pool: import("pg").Pool) =>
  (await pool.query<{ kind: string; idempotency_key: string; requester: string }>("SELECT kind, idempotency_key, requester FROM workflow")).rows;

test("creates workflows at about the configured rate and stops cleanly", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  await registerDelivery(db.pool);
  const key = "fl_app_demo-traffic-test-key";
  await installAppKey(db.pool, "demo", key, ["requests:create"], "test");
  // The time each create took: on a loaded machine a create can take longer than the interval.
  let createMs = 0;
  const timedFetch: typeof fetch = async (input, init) => {
    const started = performance.now();
    try {
      return await routeFetch(input, init);
    } finally {
      createMs += performance.now() - started;
    }
  };
  const client = createClient({ url: "http://fenceline.test", apiKey: key, fetch: timedFetch });
  // Loaded before the clock starts: the route's first import is not the traffic's rate.
  await import("@/app/api/requests/route");
  const lines: string[] = [];
  const startedAt = Date.now();
  const traffic = startDemoTraffic({ client, ratePerMinute: 1_200, log: (line) => lines.push(line) });
  await sleep(1_500);
  await traffic.stop();
  const elapsedMs = Date.now() - startedAt;

  // 20 per second, the first at once: about 31 in 1.5 s. Never ahead of the rate; behind it only
  // by creates that took longer than their interval (each waits for the one before).
  const ceiling = Math.floor(elapsedMs / 50) + 1;
  expect(traffic.created()).toBeLessThanOrEqual(ceiling);
  const perCreateMs = Math.max(50, createMs / Math.max(1, traffic.created()));
  expect(traffic.created()).toBeGreaterThanOrEqual(Math.floor((elapsedMs / perCreateMs) * 0.6));

  const rows = await workflows(db.pool);
  expect(rows).toHaveLength(traffic.created());
  expect(new Set(rows.map((row) => row.idempotency_key)).size).toBe(rows.length);
  expect(rows.every((row) => row.kind === "delivery" && row.requester === "app:demo")).toBe(true);
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
