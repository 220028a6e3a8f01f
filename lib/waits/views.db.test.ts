/**
 * What engineers read of waiting steps, driven through fenceline/testing (events sent and the
 * database clock passed, never a sleep) on real PostgreSQL:
 *
 * - the step page shows what a step waits for (an event's name and key, or a time), since when,
 *   until when, its one-time URL while it can still take it, and every event received for its key,
 *   consumed (by which step, when) or not;
 * - the steps and requests lists carry each waiting step's wait and filter by "waiting for" time or
 *   an event, and nothing else passes the filter;
 * - the waits' metrics count waiting steps by kind, events received, consumed and expired, and a
 *   timer's lateness (fired minus due on the database clock), as series and in Prometheus.
 */
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { z } from "zod";
import { listRequestsQuery } from "@/lib/api/contract/engineer/requests";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { metricsQuery } from "@/lib/api/contract/engineer/metrics";
import { createPool } from "@/lib/db/pool";
import { readTotals, renderExposition } from "@/lib/metrics/prometheus";
import { readMetrics, resolveRange } from "@/lib/metrics/series";
import { listRequests } from "@/lib/requests/list";
import { defineWorkflow, done } from "@/lib/sdk";
import { createTestEnvironment, type TestEnvironment } from "@/lib/sdk/testing";
import { readStepDetail } from "@/lib/steps/detail";
import { listSteps } from "@/lib/steps/list";

const DAY = 24 * 3_600_000;
const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });

/** order → wait for warehouse.confirmed (2 days, with a one-time URL) → 3 days' cooldown → review. */
const order = defineWorkflow({ kind: "order", version: 1, input: z.object({ orderId: z.string() }) })
  .step("take", { milestone: words("Taking the order"), run: async (ctx) => done({ orderId: ctx.input.orderId }) })
  .event("confirmed", {
    dependsOn: ["take"],
    milestone: words("Waiting for the warehouse"),
    name: "warehouse.confirmed",
    key: (ctx) => ctx.results.take.orderId,
    payload: z.object({ parcel: z.string() }),
    timeoutMs: 2 * DAY,
    onTimeout: "continue",
    url: true,
  })
  .timer("cooldown", { dependsOn: ["confirmed"], milestone: words("Waiting a few days"), afterMs: 3 * DAY })
  .step("review", { dependsOn: ["cooldown"], milestone: words("Asking for a review"), run: async () => done({ asked: true }) });

/** Registers `parcel.lost`, whose early events are kept for no time at all: one no wait takes expires at once. */
const lost = defineWorkflow({ kind: "lost", version: 1, input: z.object({ parcel: z.string() }) }).event("found", {
  milestone: words("Looking for the parcel"),
  name: "parcel.lost",
  key: (ctx) => ctx.input.parcel,
  keepEarlyEventsMs: 0,
});

let env: TestEnvironment;
let pool: pg.Pool;
beforeAll(async () => {
  // The kit's database on the test run's PostgreSQL server, rather than an embedded one of its own.
  process.env.DATABASE_URL ??= inject("databaseServerUrl");
  env = await createTestEnvironment({ workflows: [order, lost] });
  pool = createPool(env.databaseUrl, { applicationName: "fenceline-test:views" });
});
afterAll(async () => {
  await pool?.end();
  await env?.close();
});

const stepIdOf = async (requestId: string, step: string) => (await env.step(requestId, step)).step.id;
const stepsWaitingFor = async (waitingFor: string, workflow: string) =>
  (await listSteps(pool, listStepsQuery.parse({ waitingFor, workflow }))).items.map((item) => ({ name: item.name, wait: item.wait }));
const requestsWaitingFor = async (waitingFor: string) => (await listRequests(pool, listRequestsQuery.parse({ waitingFor }))).items.map((item) => item.id);

describe("waiting steps, as engineers read them", () => {
  test("an event wait shows its name, key, since and until, its one-time URL, and the events received for its key, consumed or not", async () => {
    const request = await env.createRequest(order, { orderId: "o-1" });
    const armed = await env.waitForWait(request.id, "confirmed");
    const confirmedId = await stepIdOf(request.id, "confirmed");

    const waiting = (await readStepDetail(pool, confirmedId)).wait;
    expect(waiting).toMatchObject({ room: "event", state: "waiting", name: "warehouse.confirmed", key: "o-1", onTimeout: "continue", settledAt: null, events: [], moreEvents: false });
    if (waiting?.room !== "event") throw new Error("an event wait");
    expect(Date.parse(waiting.timeoutAt!) - Date.parse(waiting.armedAt)).toBe(2 * DAY);
    expect(waiting.url).toMatch(/^\/api\/events\/url\/[A-Za-z0-9_-]{32}$/);

    // The lists: the step waits for an event, since it was armed, until its timeout.
    const summary = { waitingFor: "event", since: armed.armedAt, until: waiting.timeoutAt, event: { name: "warehouse.confirmed", key: "o-1" }, children: null };
    expect(await stepsWaitingFor("event", request.id)).toEqual([{ name: "confirmed", wait: summary }]);
    expect(await stepsWaitingFor("time", request.id)).toEqual([]);
    expect(await requestsWaitingFor("event")).toContain(request.id);
    expect(await requestsWaitingFor("time")).not.toContain(request.id);
    const listed = (await listRequests(pool, listRequestsQuery.parse({ q: request.id }))).items[0]!;
    expect(listed.steps.map((step) => [step.name, step.wait])).toEqual([["take", null], ["confirmed", summary], ["cooldown", null], ["review", null]]);

    const consumed = await env.sendEvent("warehouse.confirmed", "o-1", { parcel: "P-1" }, { idempotencyKey: "first" });
    // A second event for the same key finds no wait: it is kept, unconsumed.
    const kept = await env.sendEvent("warehouse.confirmed", "o-1", { parcel: "P-2" }, { idempotencyKey: "second" });
    expect(kept.consumedBy).toBeNull();

    const received = (await readStepDetail(pool, confirmedId)).wait;
    expect(received).toMatchObject({ state: "received", url: null, eventId: consumed.id });
    if (received?.room !== "event") throw new Error("an event wait");
    expect(received.events).toEqual([
      { id: kept.id, sender: "test", receivedAt: kept.receivedAt, keepUntil: kept.keepUntil, consumedAt: null, consumedByStepId: null, expired: false },
      { id: consumed.id, sender: "test", receivedAt: consumed.receivedAt, keepUntil: consumed.keepUntil, consumedAt: received.settledAt, consumedByStepId: confirmedId, expired: false },
    ]);
    expect(await stepsWaitingFor("event", request.id)).toEqual([]);
  });

  test("a timer shows what it asked for, since and until when; the lists filter it as waiting for time until it fires", async () => {
    const request = await env.createRequest(order, { orderId: "o-2" });
    await env.waitForWait(request.id, "confirmed");
    await env.sendEvent("warehouse.confirmed", "o-2", { parcel: "P-3" });
    const armed = await env.waitForWait(request.id, "cooldown");
    if (armed.room !== "timer") throw new Error("a timer");
    const cooldownId = await stepIdOf(request.id, "cooldown");

    expect((await readStepDetail(pool, cooldownId)).wait).toEqual({ ...armed, requested: { afterMs: 3 * DAY } });
    expect(await stepsWaitingFor("time", request.id)).toEqual([{ name: "cooldown", wait: { waitingFor: "time", since: armed.armedAt, until: armed.dueAt, event: null, children: null } }]);
    expect(await stepsWaitingFor("event", request.id)).toEqual([]);
    expect(await requestsWaitingFor("time")).toContain(request.id);

    // The clock passes for every request: the first test's cooldown comes due too.
    expect(await env.passTime(3 * DAY)).toBe(2);
    await env.waitForRequest(request.id, "completed");
    const fired = (await readStepDetail(pool, cooldownId)).wait;
    expect(fired).toMatchObject({ room: "timer", state: "fired" });
    expect(Date.parse(fired!.settledAt!)).toBeGreaterThanOrEqual(Date.parse((fired as { dueAt: string }).dueAt));
    expect(await stepsWaitingFor("time", request.id)).toEqual([]);
    expect(await requestsWaitingFor("time")).not.toContain(request.id);
  });

  test("a filter value that is none of time, event and children is refused by the query's schema", () => {
    expect(listStepsQuery.safeParse({ waitingFor: "forever" }).success).toBe(false);
    expect(listRequestsQuery.safeParse({ waitingFor: "" }).success).toBe(false);
  });

  test("the waits' metrics: steps waiting by kind, events received, consumed and expired, and timer lateness, in the series and in Prometheus", async () => {
    // One step waits for an event, one for a time; one event for a name whose early events are
    // kept for no time expires unconsumed.
    const waitsForEvent = await env.createRequest(order, { orderId: "o-3" });
    const waitsForTime = await env.createRequest(order, { orderId: "o-4" });
    await env.waitForWait(waitsForEvent.id, "confirmed");
    await env.waitForWait(waitsForTime.id, "confirmed");
    await env.sendEvent("warehouse.confirmed", "o-4", { parcel: "P-4" });
    await env.waitForWait(waitsForTime.id, "cooldown");
    const expired = await env.sendEvent("parcel.lost", "P-9", {});
    expect(expired.keepUntil).toBe(expired.receivedAt);
    // Consumed at once, its retention over at once too: consumed, never expired.
    const search = await env.createRequest(lost, { parcel: "P-8" });
    await env.waitForWait(search.id, "found");
    expect((await env.sendEvent("parcel.lost", "P-8", {})).consumedBy).toEqual({ requestId: search.id, step: "found" });

    // What the earlier tests and these left, read from the rows themselves.
    const { rows } = await pool.query<{ waiting_timers: number; waiting_events: number; received: number; consumed: number; lateness: number[] }>(
      `SELECT (SELECT count(*)::int FROM timer WHERE state = 'waiting') AS waiting_timers,
              (SELECT count(*)::int FROM event_wait WHERE state = 'waiting') AS waiting_events,
              (SELECT count(*)::int FROM event) AS received,
              (SELECT count(*)::int FROM event WHERE consumed_at IS NOT NULL) AS consumed,
              (SELECT array_agg(extract(epoch FROM settled_at - due_at)::float8 ORDER BY settled_at - due_at) FROM timer WHERE state = 'fired') AS lateness`,
    );
    expect(rows[0]).toMatchObject({ waiting_timers: 1, waiting_events: 1, received: 6, consumed: 4 });
    const [early, late] = rows[0]!.lateness as [number, number];
    expect(rows[0]!.lateness).toHaveLength(2);
    // Never early: a timer fires once the database clock has passed its due time.
    expect(early).toBeGreaterThanOrEqual(0);

    const now = Date.now();
    const metrics = await readMetrics(pool, resolveRange(metricsQuery.parse({ from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 60_000).toISOString(), bucket: "1m" })));
    expect(metrics.waits.map((metric) => metric.id)).toEqual(["waiting_steps", "events", "timer_lateness"]);
    expect([...metrics.churn, ...metrics.uncertainty].map((metric) => metric.family)).not.toContain("waits");
    const series = (id: string) => metrics.waits.find((metric) => metric.id === id)!;
    expect(series("waiting_steps").total).toEqual({ timer: 1, event: 1, children: 0 });
    expect(series("waiting_steps").keyHrefs).toEqual({ timer: "/steps?waitingFor=time", event: "/steps?waitingFor=event", children: "/steps?waitingFor=children" });
    // The last bucket's level is the level now.
    expect(series("waiting_steps").points.at(-1)!.values).toEqual({ timer: 1, event: 1, children: 0 });
    expect(series("events").total).toEqual({ received: 6, consumed: 4, expired: 1 });
    const lateness = series("timer_lateness").total;
    expect(lateness.max).toBe(late);
    expect(lateness.p50).toBeCloseTo((early + late) / 2, 9);
    expect(lateness.p95).toBeCloseTo(early + 0.95 * (late - early), 9);

    const exposition = renderExposition(await readTotals(pool));
    expect(exposition).toContain('fenceline_waits_waiting_steps{kind="timer"} 1\n');
    expect(exposition).toContain('fenceline_waits_waiting_steps{kind="event"} 1\n');
    expect(exposition).toContain('fenceline_waits_events_total{outcome="received"} 6\n');
    expect(exposition).toContain('fenceline_waits_events_total{outcome="consumed"} 4\n');
    expect(exposition).toContain('fenceline_waits_events_total{outcome="expired"} 1\n');
    expect(exposition).toContain(`fenceline_waits_timer_lateness_seconds{stat="max"} ${late}\n`);
    expect(exposition).toContain("# TYPE fenceline_waits_waiting_steps gauge\n");
  });
});
