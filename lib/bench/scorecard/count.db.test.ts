/**
 * The scorecard's count is the destination's own: effects per logical job are found by the body
 * they were applied from, so a repeat shows as a second effect of the same job whichever engine
 * sent it and whatever identity it carried, an effect of no job shows as unattributed, and the
 * fenced destination's refusals show as stale writes rejected.
 */
import { describe, expect } from "vitest";
import { StaleTermRejected } from "fenceline";
import { dbTest } from "@/lib/db/test-database";
import { demoAdapters } from "@/lib/demo/adapters";
import { startDestinationService } from "@/lib/demo/destination/service";
import { countAtDestination } from "./count";
import type { LogicalJob } from "./types";

const test = dbTest.extend("destination", { scope: "file" }, async ({ db }, { onCleanup }) => {
  const service = await startDestinationService({ databaseUrl: db.url, port: 0 });
  onCleanup(() => service.close());
  return service;
});

const job = (n: number, contract: LogicalJob["contract"]): LogicalJob => ({ n, contract, fault: "answer-lost", payload: { scorecard: `count-test/${contract}`, job: n } });
const call = (payload: unknown, requestIdentity: string, fencingTerm = 1n, resource = requestIdentity) => ({
  payload: { payload, resource },
  requestIdentity,
  epoch: 1n,
  fencingTerm,
  signal: new AbortController().signal,
  timeoutMs: 5_000,
});

describe("counting at the destination", () => {
  test("a repeated body is a second effect of its job, whatever identity it carried", async ({ destination, db }) => {
    const { opaque, idempotent } = demoAdapters(destination.url);
    const jobs = [job(101, "opaque"), job(102, "opaque"), job(103, "idempotent")];
    await opaque.invoke(call(jobs[0]!.payload, "first-sender"));
    await opaque.invoke(call(jobs[0]!.payload, "second-sender"));
    await idempotent.invoke(call(jobs[2]!.payload, "key-103"));
    await idempotent.invoke(call(jobs[2]!.payload, "key-103"));

    const count = await countAtDestination(db.pool, jobs);
    expect(Object.fromEntries(count.effects)).toEqual({ 101: 2, 102: 0, 103: 1 });
    expect(count.unattributed).toBe(0);
  });

  test("an effect of no job of the run is unattributed, and a body counts only at its own contract", async ({ destination, db }) => {
    const { opaque, queryable } = demoAdapters(destination.url);
    const mine = job(201, "queryable");
    await opaque.invoke(call({ scorecard: "someone-else", job: 1 }, "stray"));
    await opaque.invoke(call(mine.payload, "wrong-contract"));
    await queryable.invoke(call(mine.payload, "ref-201"));

    const count = await countAtDestination(db.pool, [mine]);
    expect(count.effects.get(201)).toBe(1);
    // This file's earlier effects, the stray one and the body sent to the wrong contract.
    expect(count.unattributed).toBeGreaterThanOrEqual(2);
  });

  test("the fenced destination's refusal of an older term is a stale write rejected, none accepted", async ({ destination, db }) => {
    const { fenced } = demoAdapters(destination.url);
    const payload = job(301, "fenced").payload;
    await fenced.invoke(call(payload, "identity-301", 2n, "resource-301"));
    await expect(fenced.invoke(call({ stale: true }, "identity-stale", 1n, "resource-301"))).rejects.toBeInstanceOf(StaleTermRejected);

    const count = await countAtDestination(db.pool, [job(301, "fenced")]);
    expect(count.staleWritesRejected).toBe(1);
    expect(count.staleWritesAccepted).toBe(0);
    expect(count.effects.get(301)).toBe(1);
  });
});
