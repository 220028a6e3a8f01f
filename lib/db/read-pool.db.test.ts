/**
 * DATABASE_READ_URL may lag behind the primary by any amount, and that may change what staff
 * see, never what the engine decides. The replica here is a copy of the primary taken at one
 * moment (CREATE DATABASE … TEMPLATE), after which the primary moves on: a replica that stopped
 * replaying. Claims, fenced writes, recovery and review resolutions follow the primary; the staff
 * views read through the ReadPool show the copy.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, expect, inject } from "vitest";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { reviewQueueQuery } from "@/lib/api/contract/support";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { createSingleStepWorkflows, servedFor, setLeaseExpiry } from "@/lib/engine/test-support";
import { handleWorkerProtocol } from "@/lib/api/worker-protocol";
import { ReviewConflictError } from "@/lib/review/errors";
import { listReviewCases } from "@/lib/review/queue";
import { resolveReviewCase } from "@/lib/review/resolve";
import { caseUnderReview } from "@/lib/review/test-support";
import { readStepDetail } from "@/lib/steps/detail";
import { listSteps } from "@/lib/steps/list";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import { withDatabase } from "./database";
import { createReadPool, readDatabaseUrl } from "./read-pool";
import type { ReadPool } from "./read-pool-types";
import { dbTest as test } from "./test-database";
import { withAdmin } from "./test-template";

const copies: string[] = [];
afterAll(async () => {
  await withAdmin(inject("databaseServerUrl"), async (admin) => {
    for (const name of copies) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  });
});

/** A copy of `database` as it is now, which never sees its later commits. */
async function laggedCopyOf(database: string): Promise<string> {
  const name = `${database}_replica`;
  await withAdmin(inject("databaseServerUrl"), async (admin) => {
    // A template must have no other sessions; the pool's idle connections reconnect on next use.
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [database]);
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(database)}`);
  });
  copies.push(name);
  return withDatabase(inject("databaseServerUrl"), name);
}

const openCaseIds = async (db: Parameters<typeof listReviewCases>[0]) =>
  (await listReviewCases(db, reviewQueueQuery.parse({ status: "open" }), "grace")).items.map((item) => item.id);

test("a lagging replica shows staff the past, while claims, fences, recovery and review resolutions follow the primary", async ({ db }) => {
  const adapter = `lag-${randomBytes(3).toString("hex")}`;
  const review = await caseUnderReview(db.pool);
  const [kept, expiring] = await createSingleStepWorkflows(db.pool, 2, { adapter, operation: "deliver", stepClass: "external" });
  const replica = createReadPool(await laggedCopyOf(db.name), { applicationName: "fenceline-test:read" });
  try {
    // The primary moves on: both steps claimed, one lease expired and decided, the case resolved.
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimSteps(db.pool, session, servedFor(adapter), 2);
    expect(claimed.map((step) => step.stepId).sort()).toEqual([kept, expiring].sort());
    const termOf = (stepId: string) => claimed.find((step) => step.stepId === stepId)!.fencingTerm;
    await setLeaseExpiry(db.pool, expiring!, -1_000);
    const decided = await runRecoveryScan(db.pool, { decidedBy: "test", batchSize: 10 });
    expect(decided.map((decision) => decision.stepId)).toContain(expiring);
    const resolution = { resolution: "confirm_delivered", version: review.version, externalReference: "opq_1", note: "" } as const;
    await resolveReviewCase(db.pool, review.caseId, resolution, "grace");

    // Staff views on the replica show the moment it stopped; on the primary, now.
    const onReplica = await readStepDetail(replica, kept!);
    expect(onReplica.step).toMatchObject({ state: "ready", attemptsStarted: 0 });
    expect((await readStepDetail(db.pool, kept!)).step).toMatchObject({ state: "leased", attemptsStarted: 1 });
    expect((await readStepDetail(replica, expiring!)).recoveryDecisions).toEqual([]);
    expect((await readStepDetail(db.pool, expiring!)).recoveryDecisions).toHaveLength(1);
    expect(await openCaseIds(replica)).toContain(review.caseId);
    expect(await openCaseIds(db.pool)).not.toContain(review.caseId);
    const readyOnReplica = (await listSteps(replica, listStepsQuery.parse({ state: "ready" }))).items.map((step) => step.id);
    expect(readyOnReplica).toContain(kept);

    // Decisions: the replica calls `kept` ready with no lease; the primary knows it is leased.
    const other = await registerSession(db.pool, "direct");
    expect((await claimSteps(db.pool, other, servedFor(adapter), 5)).map((step) => step.stepId)).not.toContain(kept);
    const receipts = await commitReceipts(db.pool, session, [
      { lease: { stepId: kept!, fencingTerm: termOf(kept!), sessionId: session }, conclusion: { kind: "effect", externalReference: "x-kept", result: null, verification: "direct_response" } },
      { lease: { stepId: expiring!, fencingTerm: termOf(expiring!), sessionId: session }, conclusion: { kind: "effect", externalReference: "x-late", result: null, verification: "direct_response" } },
    ]);
    expect(receipts.map((receipt) => [receipt.stepId, receipt.committed])).toEqual([
      [kept, true],
      [expiring, false],
    ]);
    // The replica still offers the case at the version it showed; the primary refuses another outcome.
    await expect(
      resolveReviewCase(db.pool, review.caseId, { resolution: "abandon", version: review.version, customerReason: "stale view", note: "stale view" }, "ann"),
    ).rejects.toBeInstanceOf(ReviewConflictError);
    expect(await openCaseIds(replica)).toContain(review.caseId);
  } finally {
    await replica.end();
  }
});

test("the read pool is DATABASE_READ_URL, else DATABASE_URL", () => {
  const saved = { primary: process.env.DATABASE_URL, replica: process.env.DATABASE_READ_URL };
  try {
    process.env.DATABASE_URL = "postgresql://primary/app";
    delete process.env.DATABASE_READ_URL;
    expect(readDatabaseUrl()).toBe("postgresql://primary/app");
    process.env.DATABASE_READ_URL = "postgresql://replica/app";
    expect(readDatabaseUrl()).toBe("postgresql://replica/app");
  } finally {
    for (const [name, value] of [["DATABASE_URL", saved.primary], ["DATABASE_READ_URL", saved.replica]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

/**
 * Compiled by `tsc --noEmit` (part of `npm test`), never called: each line is an error the
 * compiler must report, so a ReadPool cannot reach what decides. Should the mark stop working,
 * the unused @ts-expect-error fails the typecheck.
 */
export function readPoolReachesNothingThatDecides(replica: ReadPool, request: Request): void {
  // @ts-expect-error a claim reads the primary
  void claimSteps(replica, "session", [], 1);
  // @ts-expect-error a fenced write reads the primary
  void commitReceipts(replica, "session", []);
  // @ts-expect-error recovery reads the primary
  void runRecoveryScan(replica, { decidedBy: "test", batchSize: 1 });
  // @ts-expect-error a review resolution reads the primary
  void resolveReviewCase(replica, "case", { resolution: "abandon", version: 1, customerReason: "-", note: "-" }, "ann");
  // @ts-expect-error the coordinator runs on the primary
  void directCoordinator(replica);
  // @ts-expect-error the worker protocol runs on the primary
  void handleWorkerProtocol(request, replica);
}
