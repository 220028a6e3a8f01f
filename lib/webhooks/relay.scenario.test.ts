/**
 * The relay as real processes against a real receiver on loopback. Each event reaches the
 * receiver, verified, and after the receiver drops repeats by webhook-id it has every event once:
 * across a relay killed mid-send (SIGKILL), a receiver down for a while, and a receiver that
 * answers 2xx only after the relay's timeout. A 410 stops retries at once; an event whose change
 * was rolled back is never sent. Prints the figures it measured (FIGURES …).
 */
import type { Pool } from "pg";
import { afterEach, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { run } from "@/lib/engine/db";
import * as workflowSql from "@/lib/engine/sql/workflow";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { createRequestsOf, singleStep } from "@/lib/worker/test-support";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";
import { registerWebhookEndpoint } from "./endpoints";
import { TestReceiver } from "./test-receiver";

const workflow = singleStep({ kind: "webhook-scenario", run: async () => done() });
const spawned: Spawned[] = [];
const receivers: TestReceiver[] = [];

// Tests share the file's database: each starts with no endpoint (and so no delivery) of another.
test.beforeEach(async ({ db }) => {
  await db.pool.query("DELETE FROM webhook_endpoint");
});

afterEach(async () => {
  for (const relay of spawned.splice(0)) {
    if (relay.alive) relay.process.kill("SIGTERM");
    await relay.exited;
  }
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

function startRelay(databaseUrl: string, name: string, settings: Record<string, string> = {}): Spawned {
  const relay = spawnNodeProcess(name, "lib/cli/relay.ts", {
    DATABASE_URL: databaseUrl,
    FENCELINE_PROCESS: name,
    FENCELINE_WEBHOOK_TIMEOUT_MS: "1000",
    FENCELINE_WEBHOOK_BACKOFF_BASE_MS: "100",
    FENCELINE_WEBHOOK_BACKOFF_MAX_MS: "1000",
    FENCELINE_RELAY_INTERVAL_MS: "50",
    ...settings,
  });
  spawned.push(relay);
  return relay;
}

async function receiverFor(pool: Pool, app: string | null = null): Promise<TestReceiver> {
  const receiver = new TestReceiver();
  receivers.push(receiver);
  await receiver.start();
  const endpoint = await registerWebhookEndpoint(pool, { url: receiver.url, eventTypes: ["request.cancelled"], app }, "test");
  receiver.secret = endpoint.secret;
  return receiver;
}

/** `count` requests, each cancelled: one committed request.cancelled event each. Answers their ids. */
async function cancelledRequests(pool: Pool, count: number): Promise<string[]> {
  const requests = await createRequestsOf(pool, workflow, Array.from({ length: count }, (_, index) => ({ index })));
  for (const request of requests) await cancelWorkflow(pool, request.workflowId, "test");
  return requests.map((request) => request.workflowId);
}

const deliveryStates = async (pool: Pool) =>
  (await pool.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM webhook_delivery GROUP BY state ORDER BY state")).rows;

const eventIdsOf = async (pool: Pool, workflowIds: string[]) =>
  (await pool.query<{ id: string }>("SELECT id FROM outbox_event WHERE workflow_id = ANY($1::uuid[])", [workflowIds])).rows.map((row) => row.id);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

test("two relays deliver every event once in the normal path; loopback latency from commit to receiver", { timeout: 90_000 }, async ({ db }) => {
  const receiver = await receiverFor(db.pool);
  const relays = [startRelay(db.url, "relay-a"), startRelay(db.url, "relay-b")];
  await Promise.all(relays.map((relay) => relay.waitForLine(/^FENCELINE_RELAY_READY/)));
  const workflowIds = await cancelledRequests(db.pool, 200);
  const events = await eventIdsOf(db.pool, workflowIds);
  await vi.waitFor(() => expect(receiver.deduped().size).toBe(200), { timeout: 60_000, interval: 200 });
  expect(receiver.received.every((entry) => entry.verified)).toBe(true);
  expect(receiver.received).toHaveLength(200);
  expect([...receiver.deduped()].sort()).toEqual([...events].sort());
  const { rows } = await db.pool.query<{ id: string; created_ms: number }>(
    "SELECT id, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms FROM outbox_event WHERE id = ANY($1::uuid[])",
    [events],
  );
  const latencies = rows.map((row) => receiver.received.find((entry) => entry.id === row.id)!.atMs - row.created_ms);
  const body = receiver.received[0]!.body;
  expect(body).toMatchObject({ type: "request.cancelled", data: { kind: "webhook-scenario", progress: { headline: { state: "cancelled" } } } });
  expect(JSON.stringify(body)).not.toMatch(/lease|fencing|attempt|worker/i);
  console.log(`FIGURES normal: ${receiver.received.length} delivered, 0 retries, latency p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms (commit to receiver, 2 relays, 200 events)`);
});

test("a relay killed mid-send is taken over after its lease expires; after dedupe the receiver has each event once", { timeout: 90_000 }, async ({ db }) => {
  const receiver = await receiverFor(db.pool);
  let hung: string | null = null;
  receiver.answer = (id) => {
    if (hung === null) {
      hung = id;
      return "hang";
    }
    return { status: 200 };
  };
  // Timeout 3 s: its lease on a delivery is 6 s, on the database clock.
  const first = startRelay(db.url, "relay-killed", { FENCELINE_WEBHOOK_TIMEOUT_MS: "3000" });
  await first.waitForLine(/^FENCELINE_RELAY_READY/);
  const workflowIds = await cancelledRequests(db.pool, 5);
  await vi.waitFor(() => expect(hung).not.toBeNull(), { timeout: 20_000 });
  first.process.kill("SIGKILL");
  await first.exited;
  const killedAt = Date.now();
  const second = startRelay(db.url, "relay-survivor");
  await second.waitForLine(/^FENCELINE_RELAY_READY/);
  const events = await eventIdsOf(db.pool, workflowIds);
  await vi.waitFor(async () => expect(await deliveryStates(db.pool)).toEqual([{ state: "delivered", n: 5 }]), { timeout: 30_000, interval: 200 });
  expect(receiver.deduped()).toEqual(new Set(events));
  const [{ lease_ms: leaseMs }] = (await db.pool.query("SELECT (extract(epoch FROM a2.started_at - a1.started_at) * 1000)::int AS lease_ms FROM webhook_attempt a1 JOIN webhook_attempt a2 ON a2.delivery_id = a1.delivery_id AND a2.lease_term = 2 JOIN webhook_delivery d ON d.id = a1.delivery_id WHERE a1.lease_term = 1 AND d.event_id = $1", [hung])).rows;
  // Not taken over before the lease ran out on the database clock.
  expect(leaseMs).toBeGreaterThanOrEqual(6_000);
  const duplicates = receiver.received.length - receiver.deduped().size;
  expect(receiver.received.filter((entry) => entry.id === hung)).toHaveLength(2);
  const { rows } = await db.pool.query("SELECT a.lease_term::int AS term, a.ended_at IS NULL AS interrupted, a.status_code FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id WHERE d.event_id = $1 ORDER BY a.lease_term", [hung]);
  expect(rows).toEqual([{ term: 1, interrupted: true, status_code: null }, { term: 2, interrupted: false, status_code: 200 }]);
  const takenOverMs = receiver.received.filter((entry) => entry.id === hung)[1]!.atMs - killedAt;
  console.log(`FIGURES kill: 5 events, ${receiver.received.length} received, duplicates ${duplicates} before dedupe, 0 after; resent ${takenOverMs} ms after SIGKILL (lease 6 s from the claim)`);
});

test("a receiver down for a while gets everything once it is back, retried with backoff", { timeout: Number(process.env.FENCELINE_TEST_OUTAGE_MS ?? 3_000) + 90_000 }, async ({ db }) => {
  const receiver = await receiverFor(db.pool);
  const port = receiver.port;
  await receiver.stop();
  const relay = startRelay(db.url, "relay-outage");
  await relay.waitForLine(/^FENCELINE_RELAY_READY/);
  const workflowIds = await cancelledRequests(db.pool, 20);
  const downAt = Date.now();
  // FENCELINE_TEST_OUTAGE_MS lengthens the outage for a measurement run.
  const outageMs = Number(process.env.FENCELINE_TEST_OUTAGE_MS ?? 3_000);
  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT min(attempts)::int AS attempts FROM webhook_delivery");
    expect(rows[0].attempts).toBeGreaterThanOrEqual(3);
  }, { timeout: 30_000, interval: 200 });
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, downAt + outageMs - Date.now())));
  await receiver.start(port);
  const downForMs = Date.now() - downAt;
  await vi.waitFor(async () => expect(await deliveryStates(db.pool)).toEqual([{ state: "delivered", n: 20 }]), { timeout: 30_000, interval: 200 });
  expect(receiver.deduped()).toEqual(new Set(await eventIdsOf(db.pool, workflowIds)));
  const { rows } = await db.pool.query("SELECT sum(attempts - 1)::int AS retries, (SELECT failing_since FROM webhook_endpoint) AS failing_since FROM webhook_delivery");
  expect(rows[0].retries).toBeGreaterThanOrEqual(40);
  expect(rows[0].failing_since).toBeNull();
  console.log(`FIGURES outage: 20 events delivered after a ${downForMs} ms outage, ${rows[0].retries} retries, ${receiver.received.length - receiver.deduped().size} duplicates`);
});

test("a receiver answering 2xx past the timeout may see an event twice; dedupe by webhook-id keeps one", { timeout: 90_000 }, async ({ db }) => {
  const receiver = await receiverFor(db.pool);
  receiver.answer = (_id, seen) => (seen === 0 ? { status: 200, delayMs: 1_500 } : { status: 200 });
  const relay = startRelay(db.url, "relay-slow", { FENCELINE_WEBHOOK_TIMEOUT_MS: "500" });
  await relay.waitForLine(/^FENCELINE_RELAY_READY/);
  const workflowIds = await cancelledRequests(db.pool, 10);
  await vi.waitFor(async () => expect(await deliveryStates(db.pool)).toEqual([{ state: "delivered", n: 10 }]), { timeout: 30_000, interval: 200 });
  expect(receiver.deduped()).toEqual(new Set(await eventIdsOf(db.pool, workflowIds)));
  expect(receiver.received).toHaveLength(20);
  const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM webhook_attempt WHERE error = 'no answer within 500 ms'");
  expect(rows[0].n).toBe(10);
  console.log(`FIGURES slow: 10 events, ${receiver.received.length} received before dedupe, ${receiver.deduped().size} after`);
});

test("410 fails the delivery at once: no retry; other 4xx likewise, 429 waits for Retry-After", { timeout: 60_000 }, async ({ db }) => {
  const receiver = await receiverFor(db.pool);
  const statuses = new Map<string, number>();
  receiver.answer = (id, seen) => {
    const status = statuses.get(id) ?? [410, 429][statuses.size % 2]!;
    statuses.set(id, status);
    return status === 429 && seen === 0 ? { status: 429, headers: { "retry-after": "2" } } : status === 429 ? { status: 200 } : { status };
  };
  const relay = startRelay(db.url, "relay-410");
  await relay.waitForLine(/^FENCELINE_RELAY_READY/);
  await cancelledRequests(db.pool, 4);
  await vi.waitFor(async () => expect(await deliveryStates(db.pool)).toEqual([{ state: "delivered", n: 2 }, { state: "failed", n: 2 }]), { timeout: 30_000, interval: 200 });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const gone = [...statuses].filter(([, status]) => status === 410).map(([id]) => id);
  for (const id of gone) expect(receiver.received.filter((entry) => entry.id === id)).toHaveLength(1);
  const { rows } = await db.pool.query("SELECT attempts, last_status FROM webhook_delivery WHERE state = 'failed'");
  expect(rows).toEqual([{ attempts: 1, last_status: 410 }, { attempts: 1, last_status: 410 }]);
  // The 429s were retried no sooner than Retry-After said.
  for (const [id, status] of statuses) {
    if (status !== 429) continue;
    const [first, second] = receiver.received.filter((entry) => entry.id === id);
    expect(second!.atMs - first!.atMs).toBeGreaterThanOrEqual(1_900);
  }
});

test("an event whose change rolled back is never delivered", { timeout: 60_000 }, async ({ db }) => {
  const receiver = await receiverFor(db.pool);
  const [rolledBack] = await createRequestsOf(db.pool, workflow, [{ rolledBack: true }]);
  const client = await db.pool.connect();
  await client.query("BEGIN");
  await run(client, workflowSql.cancelWorkflow, [rolledBack!.workflowId, "rolled back", null]);
  const relay = startRelay(db.url, "relay-rollback");
  await relay.waitForLine(/^FENCELINE_RELAY_READY/);
  await client.query("ROLLBACK");
  client.release();
  const committed = await cancelledRequests(db.pool, 3);
  await vi.waitFor(() => expect(receiver.deduped().size).toBe(3), { timeout: 20_000, interval: 100 });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(receiver.received.map((entry) => entry.body.data.requestId).sort()).toEqual([...committed].sort());
  expect(receiver.received.some((entry) => entry.body.data.requestId === rolledBack!.workflowId)).toBe(false);
});
