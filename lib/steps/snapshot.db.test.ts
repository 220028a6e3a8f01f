/**
 * A record read in parts is read at one moment: while a real worker claims and completes steps,
 * the step page, the request page and the app's read of a request never show what no single moment held (a completed step
 * without its receipt or the attempt the receipt names, a leased step whose latest attempt has
 * ended, more or fewer attempts than the step counts). Their statements run side by side; on the
 * pool each took its own snapshot, and a commit between two of them tore the record.
 */
import { expect } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { readRequestPage } from "@/lib/requests/page/read";
import type { RequestPageData } from "@/lib/requests/page/types";
import { readRequestWithProgress } from "@/lib/requests/read";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import type { StepDetail } from "@/lib/api/contract/engineer/steps";
import { readStepDetail } from "./detail";

const words = { upcoming: "Step", current: "Working on it", done: "Done" };
/** Opened once the readers have seen steps leased: until then every `b` holds its lease, so reads certainly overlap work in flight. */
let openGate = () => {};
const gate = new Promise<void>((resolve) => (openGate = resolve));
const chain = defineWorkflow({ kind: "snapshot-chain", version: 1, input: z.object({ n: z.number().int() }) })
  .step("a", { milestone: words, run: async (ctx) => done({ n: ctx.input.n }) })
  .step("b", {
    dependsOn: ["a"],
    milestone: words,
    run: async (ctx) => {
      await gate;
      return done({ n: ctx.input.n });
    },
  })
  .step("c", { dependsOn: ["b"], milestone: words, run: async (ctx) => done({ n: ctx.input.n }) })
  .step("d", { dependsOn: ["c"], milestone: words, run: async (ctx) => done({ n: ctx.input.n }) });

const REQUESTS = 80;
/** Reads that saw a leased step before the `b` steps may complete. */
const LEASED_READS = 10;
const DONE = new Set(["completed", "completed_without_effect"]);

/** What a step's record must agree with, whatever moment it was read at; a line per disagreement. */
function tornStep(detail: StepDetail): string[] {
  const { step, attempts, leases, receipts } = detail;
  const where = `step ${step.name} (${step.state}, term ${step.fencingTerm})`;
  const torn: string[] = [];
  const latest = attempts.at(-1);
  if (attempts.length !== step.attemptsStarted) torn.push(`${where}: ${attempts.length} attempts, the step counts ${step.attemptsStarted}`);
  if (leases.length !== attempts.length) torn.push(`${where}: ${leases.length} lease terms for ${attempts.length} attempts`);
  if (DONE.has(step.state)) {
    const receipt = receipts[0];
    if (!receipt) torn.push(`${where}: completed without its receipt`);
    else if (!attempts.some((a) => a.id === receipt.attemptId && a.endedAt !== null)) torn.push(`${where}: its receipt's attempt is missing or still running`);
  }
  if (step.state === "leased" && (!latest || latest.endedAt !== null || latest.fencingTerm !== step.fencingTerm || receipts.length > 0)) {
    torn.push(`${where}: leased, but its latest attempt is ${latest ? `term ${latest.fencingTerm}, ended ${latest.endedAt}` : "missing"}, ${receipts.length} receipts`);
  }
  return torn;
}

/** The same, for each step of a request's page, and the request's status against its steps. */
function tornPage(page: RequestPageData): string[] {
  const torn: string[] = [];
  for (const step of page.steps) {
    const where = `request ${page.request.id} step ${step.name} (${step.state}, term ${step.fencingTerm})`;
    const latest = step.attempts.at(-1);
    if (step.attempts.length !== step.attemptsStarted) torn.push(`${where}: ${step.attempts.length} attempts, the step counts ${step.attemptsStarted}`);
    if (DONE.has(step.state) && (!step.receipt || !step.attempts.some((a) => a.id === step.receipt!.attemptId && a.endedAt !== null))) {
      torn.push(`${where}: completed without its receipt's attempt, ended`);
    }
    if (step.state === "leased" && (!latest || latest.endedAt !== null || latest.fencingTerm !== step.fencingTerm)) torn.push(`${where}: leased, but its latest attempt has ended or is missing`);
  }
  if (page.request.status === "completed" && !page.steps.every((s) => DONE.has(s.state))) torn.push(`request ${page.request.id}: completed with a step not done`);
  return torn;
}

test("while a worker completes steps, every step page and request page read agrees with itself", { timeout: 120_000 }, async ({ db }) => {
  const requests = await createRequestsOf(db.pool, chain, Array.from({ length: REQUESTS }, (_, n) => ({ n })));
  const worker = testWorker(db.pool, [chain], { concurrency: 8, pollIntervalMs: 20 });
  await worker.start();

  const torn: string[] = [];
  let readsInFlight = 0;
  const sawLeased = () => {
    readsInFlight += 1;
    if (readsInFlight >= LEASED_READS) openGate();
  };
  const allDone = async () => {
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM workflow WHERE kind = 'snapshot-chain' AND status = 'active'");
    return rows[0]!.n === 0;
  };
  // Readers, as engineers with the pages open, until the worker has completed every request.
  const readSteps = async (from: number) => {
    for (let i = from; !(await allDone()); i += 1) {
      const request = requests[i % REQUESTS]!;
      for (const stepId of request.stepIds.values()) {
        const detail = await readStepDetail(db.pool, stepId);
        if (detail.step.state === "leased") sawLeased();
        torn.push(...tornStep(detail));
      }
    }
  };
  const readPages = async (from: number) => {
    for (let i = from; !(await allDone()); i += 1) {
      const page = await readRequestPage(db.pool, requests[(i * 7) % REQUESTS]!.workflowId);
      if (page.steps.some((s) => s.state === "leased")) sawLeased();
      torn.push(...tornPage(page));
      // The app's read of the same request: its status and what its end user sees, of one moment.
      const app = await readRequestWithProgress(db.pool, page.request.id, null);
      if ((app.status === "completed") !== (app.progress.headline.state === "completed")) torn.push(`request ${app.id}: ${app.status}, its end user sees ${app.progress.headline.state}`);
    }
  };
  await Promise.all([readSteps(0), readSteps(REQUESTS / 2), readPages(0), readPages(REQUESTS / 2)]);
  await worker.stop();

  // Every request completed, so the gate opened: at least LEASED_READS reads overlapped leased steps.
  expect(torn.slice(0, 5)).toEqual([]);
});
