/**
 * The synthetic destination service against real PostgreSQL, through the adapters' own clients.
 * One conformance suite runs against all four destinations; where a destination's contract makes
 * a test differ, the test's name says which capability decides it. Invariant 6 is checked here at
 * the destination itself: fenced and idempotent destinations record no duplicate effect under
 * concurrent duplicates and stale terms.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect } from "vitest";
import { dbTest } from "@/lib/db/test-database";
import { DefiniteFailure, RateLimited, StaleTermRejected, UnknownOutcome, type AdapterContract } from "fenceline";
import { demoAdapters, type DemoAdapters } from "../adapters";
import type { FaultProfile } from "@/lib/lab/fault-settings";
import { seededRandom } from "./faults";
import { readAudit, startDestinationService } from "./service";

const test = dbTest.extend("destination", { scope: "file" }, async ({ db }, { onCleanup }) => {
  const service = await startDestinationService({ databaseUrl: db.url, port: 0 });
  onCleanup(() => service.close());
  return service;
});

type Call = { requestIdentity: string; epoch: bigint; fencingTerm: bigint; signal: AbortSignal; payload: unknown };
type Answer = { externalReference: string; result: unknown; replayed: boolean };

/** Sends `call` through the demo's adapter `name` at `url`; the fenced destination writes to `resource`. */
async function send(name: keyof DemoAdapters, url: string, call: Call, resource = "", timeoutMs?: number): Promise<Answer> {
  const adapter = demoAdapters(url)[name];
  const answer = await adapter.invoke({ ...call, payload: { payload: call.payload, resource }, timeoutMs: timeoutMs ?? adapter.contract.timeoutMs });
  return { externalReference: answer.externalReference!, result: answer.result, replayed: answer.replayed ?? false };
}

type Destination = {
  contract: AdapterContract;
  prefix: string;
  create(url: string, call: Call, resource: string, timeoutMs?: number): Promise<Answer>;
};

const destination = (name: keyof DemoAdapters, prefix: string): Destination => ({
  contract: demoAdapters("http://127.0.0.1:9")[name].contract,
  prefix,
  create: (url, call, resource, timeoutMs) => send(name, url, call, resource, timeoutMs),
});

const destinations: Destination[] = [destination("fenced", "fen_"), destination("idempotent", "idm_"), destination("queryable", "qry_"), destination("opaque", "opq_")];

const unique = (label: string) => `${label}-${randomUUID()}`;
const call = (requestIdentity: string, fencingTerm = 1n, epoch = 1n): Call => ({
  requestIdentity,
  epoch,
  fencingTerm,
  signal: new AbortController().signal,
  payload: { amount: 10 },
});

async function effectsOf(pool: import("pg").Pool, requestIdentity: string): Promise<string[]> {
  const { rows } = await pool.query<{ external_reference: string }>(
    "SELECT external_reference FROM destination.effect WHERE request_identity = $1 ORDER BY id",
    [requestIdentity],
  );
  return rows.map((row) => row.external_reference);
}

async function putFaults(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/admin/faults`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** Runs `work` with `profile` set for one destination kind, and clears every fault afterwards. */
async function withFaults<T>(url: string, kind: string, profile: FaultProfile, work: () => Promise<T>): Promise<T> {
  expect((await putFaults(url, { kinds: { [kind]: profile } })).status).toBe(200);
  try {
    return await work();
  } finally {
    await putFaults(url, {});
  }
}

describe.each(destinations)("the $contract.name destination", ({ contract, prefix, create }) => {
  test("applies a create and answers a fresh external reference", async ({ destination, db }) => {
    const identity = unique("create");
    const answer = await create(destination.url, call(identity), unique("resource"));
    expect(answer.externalReference.startsWith(prefix)).toBe(true);
    expect(answer.result).toMatchObject({ externalReference: answer.externalReference, destination: contract.name });
    expect(await effectsOf(db.pool, identity)).toEqual([answer.externalReference]);
  });

  if (contract.fenceEnforcement) {
    test("fenceEnforcement: of 20 concurrent terms only strictly newer ones apply, and an older one is rejected", async ({ destination, db }) => {
      const resource = unique("resource");
      // Terms 1..10 twice, under 20 identities, in a fixed shuffled order: equal terms compete too.
      const random = seededRandom(7);
      const terms = Array.from({ length: 20 }, (_, index) => BigInt((index % 10) + 1))
        .map((term) => ({ term, order: random() }))
        .sort((a, b) => a.order - b.order)
        .map(({ term }) => term);
      const outcomes = await Promise.allSettled(terms.map((term, index) => create(destination.url, call(`${resource}-${index}`, term), resource)));
      const rejected = outcomes.filter((outcome) => outcome.status === "rejected");
      for (const outcome of rejected) expect(outcome.reason).toBeInstanceOf(StaleTermRejected);

      const { rows } = await db.pool.query<{ term: string }>("SELECT term FROM destination.effect WHERE resource = $1 ORDER BY id", [resource]);
      const accepted = rows.map((row) => BigInt(row.term));
      expect(accepted.length).toBe(20 - rejected.length);
      expect(accepted.every((term, index) => index === 0 || term > accepted[index - 1]!)).toBe(true);
      expect(accepted.at(-1)).toBe(10n);

      const stale = await create(destination.url, call(unique("late"), 5n), resource).catch((error: unknown) => error);
      expect(stale).toBeInstanceOf(StaleTermRejected);
      expect(stale).toMatchObject({ currentEpoch: 1n, currentTerm: 10n });
      expect((await db.pool.query("SELECT 1 FROM destination.effect WHERE resource = $1", [resource])).rowCount).toBe(accepted.length);

      const audit = await readAudit(db.pool);
      expect(audit.duplicates.filter((duplicate) => duplicate.resource === resource)).toEqual([]);
      expect(audit.fenceRegressions.filter((regression) => regression.resource === resource)).toEqual([]);
    });

    test("fenceEnforcement: a newer epoch outranks any term of an older one", async ({ destination }) => {
      const resource = unique("resource");
      await create(destination.url, call(unique("old-epoch"), 50n, 1n), resource);
      await create(destination.url, call(unique("new-epoch"), 1n, 2n), resource);
      await expect(create(destination.url, call(unique("stale-epoch"), 99n, 1n), resource)).rejects.toBeInstanceOf(StaleTermRejected);
    });

    test("fenceEnforcement: a request already applied replays its result under a newer term", async ({ destination, db }) => {
      const resource = unique("resource");
      const identity = unique("retried");
      const first = await create(destination.url, call(identity, 1n), resource);
      const retry = await create(destination.url, call(identity, 2n), resource);
      expect(retry.externalReference).toBe(first.externalReference);
      expect(await effectsOf(db.pool, identity)).toEqual([first.externalReference]);
      await expect(create(destination.url, call(unique("other"), 1n), resource)).rejects.toBeInstanceOf(StaleTermRejected);
    });
  } else {
    test("no fenceEnforcement: an older term is ceremony and is applied anyway", async ({ destination, db }) => {
      const newer = unique("newer");
      const older = unique("older");
      await create(destination.url, call(newer, 9n), "");
      await create(destination.url, call(older, 1n), "");
      expect(await effectsOf(db.pool, older)).toHaveLength(1);
    });
  }

  if (contract.repetition === "idempotency_protected") {
    test(`${contract.repetition}: 20 concurrent duplicates answer one reference and apply once`, async ({ destination, db }) => {
      const identity = unique("duplicate");
      const resource = unique("resource");
      const answers = await Promise.all(Array.from({ length: 20 }, () => create(destination.url, call(identity), resource)));
      const references = new Set(answers.map((answer) => answer.externalReference));
      expect(references.size).toBe(1);
      expect(await effectsOf(db.pool, identity)).toEqual([...references]);
      expect((await readAudit(db.pool)).duplicates.filter((duplicate) => duplicate.requestIdentity === identity)).toEqual([]);
    });
  } else {
    test(`${contract.repetition}: a repeated create applies again and the audit reports the duplicate`, async ({ destination, db }) => {
      const identity = unique("repeated");
      const first = await create(destination.url, call(identity), "");
      const second = await create(destination.url, call(identity), "");
      expect(second.externalReference).not.toBe(first.externalReference);
      const audit = await readAudit(db.pool);
      expect(audit.duplicates.find((duplicate) => duplicate.requestIdentity === identity)).toMatchObject({
        kind: contract.name,
        effects: 2,
        externalReferences: [first.externalReference, second.externalReference],
      });
    });
  }

  if (contract.statusQuery) {
    test("statusQuery: the status of a client reference says whether it was applied", async ({ destination }) => {
      const { queryable } = demoAdapters(destination.url);
      const identity = unique("queried");
      const query = { requestIdentity: identity, signal: new AbortController().signal, timeoutMs: 5_000 };
      expect(await queryable.query!(query)).toMatchObject({ status: "not_found" });
      const answer = await send("queryable", destination.url, call(identity));
      expect(await queryable.query!(query)).toMatchObject({
        status: "applied",
        externalReference: answer.externalReference,
        result: { status: "applied", externalReference: answer.externalReference, applications: 1 },
      });
    });
  }

  test("rate limiting refuses with retry-after and applies nothing", async ({ destination, db }) => {
    const identity = unique("limited");
    const error = await withFaults(destination.url, contract.name, { rateLimit: { rate: 1, retryAfterMs: 2_500 } }, () =>
      create(destination.url, call(identity), unique("resource")).catch((caught: unknown) => caught),
    );
    expect(error).toBeInstanceOf(RateLimited);
    expect(error).toMatchObject({ retryAfterMs: 2_500 });
    expect(await effectsOf(db.pool, identity)).toEqual([]);
  });

  test("an injected error is a definite failure and applies nothing", async ({ destination, db }) => {
    const identity = unique("failed");
    const error = await withFaults(destination.url, contract.name, { errorRate: 1 }, () =>
      create(destination.url, call(identity), unique("resource")).catch((caught: unknown) => caught),
    );
    expect(error).toBeInstanceOf(DefiniteFailure);
    expect(error).toMatchObject({ status: 500 });
    expect(await effectsOf(db.pool, identity)).toEqual([]);
  });

  test("commit-then-drop leaves the caller with an unknown outcome and the audit with the effect", async ({ destination, db }) => {
    const identity = unique("dropped");
    const error = await withFaults(destination.url, contract.name, { dropResponseRate: 1 }, () =>
      create(destination.url, call(identity), unique("resource")).catch((caught: unknown) => caught),
    );
    expect(error).toBeInstanceOf(UnknownOutcome);
    expect(error).toMatchObject({ reason: "connection lost" });
    expect(await effectsOf(db.pool, identity)).toHaveLength(1);
  });

  test("an answer after the caller's timeout is an unknown outcome whose effect committed", async ({ destination, db }) => {
    const identity = unique("late");
    const error = await withFaults(destination.url, contract.name, { lateResponse: { rate: 1, delayMs: 1_000 } }, () =>
      create(destination.url, call(identity), unique("resource"), 200).catch((caught: unknown) => caught),
    );
    expect(error).toBeInstanceOf(UnknownOutcome);
    expect(error).toMatchObject({ reason: "timeout" });
    expect(await effectsOf(db.pool, identity)).toHaveLength(1);
  });

  test("dropFirstResponse: the first request with a body loses its answer after its effect, and its repeat is answered", async ({ destination, db }) => {
    const identity = unique("first-lost");
    const resource = unique("resource");
    const body = { amount: 10, body: identity };
    expect((await putFaults(destination.url, { dropFirstResponse: [contract.name] })).status).toBe(200);
    try {
      const first = await create(destination.url, { ...call(identity, 1n), payload: body }, resource).catch((caught: unknown) => caught);
      expect(first).toBeInstanceOf(UnknownOutcome);
      expect(await effectsOf(db.pool, identity)).toHaveLength(1);
      const repeat = await create(destination.url, { ...call(identity, 2n), payload: body }, resource);
      const protectedKind = contract.repetition === "idempotency_protected";
      expect(repeat.replayed).toBe(protectedKind);
      expect(await effectsOf(db.pool, identity)).toHaveLength(protectedKind ? 1 : 2);
    } finally {
      await putFaults(destination.url, {});
    }
  });
});

describe("the admin routes", () => {
  test("refuse invalid fault settings with a problem document", async ({ destination }) => {
    const response = await putFaults(destination.url, { global: { errorRate: 2 }, kinds: { nowhere: {} } });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await response.json()) as { title: string; issues: { path: string }[] };
    expect(problem.title).toBe("invalid fault settings");
    expect(problem.issues.map((issue) => issue.path)).toContain("global.errorRate");
  });

  test("replay the same faults for the same seed, and keep settings across a restart", async ({ destination, db }) => {
    const settings = { seed: 42, global: { errorRate: 0.5, latency: { fixedMs: 1, jitterMs: 5 } } };
    const run = async (url: string) => {
      expect((await putFaults(url, settings)).status).toBe(200);
      const pattern: string[] = [];
      for (let index = 0; index < 12; index += 1) {
        pattern.push(await send("opaque", url, call(unique("seeded"))).then(() => "ok", (error: unknown) => (error as Error).name));
      }
      return pattern;
    };
    const first = await run(destination.url);
    expect(first).toContain("ok");
    expect(first).toContain("DefiniteFailure");
    expect(await run(destination.url)).toEqual(first);

    const restarted = await startDestinationService({ databaseUrl: db.url, port: 0 });
    try {
      const read = await fetch(`${restarted.url}/admin/faults`);
      expect(await read.json()).toMatchObject(settings);
    } finally {
      await putFaults(restarted.url, {});
      await restarted.close();
      await putFaults(destination.url, {});
    }
  });

  test("serve the audit that readAudit reads", async ({ destination, db }) => {
    const identity = unique("audited");
    await send("opaque", destination.url, call(identity));
    await send("opaque", destination.url, call(identity));
    const served = await (await fetch(`${destination.url}/admin/audit`)).json();
    const read = await readAudit(db.pool);
    expect(served).toEqual(JSON.parse(JSON.stringify(read)));
    expect(read.total).toBe(Object.values(read.effects).reduce((sum, count) => sum + count, 0));
    expect(read.duplicates).toContainEqual(expect.objectContaining({ kind: "opaque", requestIdentity: identity, effects: 2 }));
  });
});

test("main.ts runs as its own process on loopback and stops on SIGTERM", async ({ db }) => {
  const child = spawn(process.execPath, ["--import", "tsx", "lib/demo/destination/main.ts"], {
    env: { ...process.env, DESTINATION_DATABASE_URL: db.url, DESTINATION_PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  try {
    let url = "";
    for await (const line of createInterface({ input: child.stdout! })) {
      const ready = /^FENCELINE_DESTINATION_READY (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      if (ready) {
        url = ready[1]!;
        break;
      }
    }
    expect(url).not.toBe("");
    const answer = await send("opaque", url, call(unique("process")));
    expect(answer.externalReference.startsWith("opq_")).toBe(true);
  } finally {
    child.kill("SIGTERM");
  }
  const [code, signal] = await exited;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
});
