/**
 * A test environment: the real engine on a fresh PostgreSQL database, a real worker (in this
 * process, over the direct database transport) serving the adopter's workflows, the faults the
 * test asks for, and reads of everything the engine recorded. Nothing in it is a mock: the
 * claims, checkpoints, receipts, fencing rejections and recovery decisions are the production
 * statements, decided by the database clock.
 */
import { readCompensation } from "@/lib/compensation/read";
import type { CompensationView } from "@/lib/compensation/types";
import { cancelRequest } from "@/lib/requests/read";
import type { StepDetail } from "@/lib/api/contract/engineer/steps";
import type { WorkflowDefinition, WorkflowInput } from "@/lib/definitions/workflow";
import { run } from "@/lib/engine/db";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { readRequestWithProgress } from "@/lib/requests/read";
import { createRequest } from "@/lib/requests/create";
import type { RequestRecord, RequestStatus, RequestWithProgress } from "@/lib/requests/types";
import type { TrackingView } from "@/lib/projection/types";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { resolveReviewCase } from "@/lib/review/resolve";
import { readStepDetail } from "@/lib/steps/detail";
import { settleDue } from "@/lib/engine/waits";
import { sendEvent } from "@/lib/events/send";
import type { SentEvent } from "@/lib/events/types";
import { dueWork } from "@/lib/waits/rooms";
import { readStepWaits } from "@/lib/waits/read";
import type { StepWait } from "@/lib/waits/types";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import type { CheckpointName } from "@/lib/worker/hooks";
import { Worker } from "@/lib/worker/worker";
import { environmentDatabase, type EnvironmentDatabase } from "./database";
import { FaultPlan, type CheckpointFault, type FaultTarget, type PausedAttempt, type StoppedAttempt } from "./faults";
import * as sql from "./sql";

/** A step class (lease policy) the adopter's workflows name besides the built-in `pure` and `external`. */
export type StepClass = {
  readonly name: string;
  readonly leaseTtlMs: number;
  readonly renewEveryMs: number;
  readonly attemptDeadlineMs: number;
  readonly graceMs: number;
};

/** What `createTestEnvironment` runs: the workflows under test and the worker's settings. */
export type TestEnvironmentOptions = {
  /** The workflows under test: a worker serving them runs in this process. */
  readonly workflows: readonly WorkflowDefinition[];
  /** Step classes to create before the worker starts. */
  readonly stepClasses?: readonly StepClass[];
  /** Attempts the worker runs at once. Default 10. */
  readonly concurrency?: number;
  /** Receives the worker's log lines; by default they are kept and shown when a wait times out. */
  readonly log?: (line: string) => void;
};

/** How a person settles a review case, as support would in the review queue. */
export type ReviewResolution =
  | { readonly resolution: "confirm_delivered"; readonly externalReference: string; readonly note?: string }
  /** Delivered, though the destination shows no reference: `note` says how it was confirmed, and the receipt records it. */
  | { readonly resolution: "confirm_delivered"; readonly externalReference?: undefined; readonly note: string }
  | { readonly resolution: "confirm_not_delivered"; readonly note: string }
  | { readonly resolution: "abandon"; readonly customerReason: string; readonly note: string };

/** An open review case of a request. */
export type OpenReviewCase = { readonly id: string; readonly step: string; readonly reason: string };

/** How long a wait of the environment may take. */
export type WaitOptions = {
  /** How long to wait before failing with where the request stands. Default 10,000 ms. */
  readonly timeoutMs?: number;
};

/** The faults a test can ask for; each applies to the next matching call or attempt (`times`, default 1). */
export type Faults = {
  /** The destination applies the effect and the answer is lost: the call throws, the effect exists. */
  answerLost(target: FaultTarget): void;
  /** The destination answers 429 with Retry-After, before any effect. */
  rateLimited(target: FaultTarget, retryAfterMs: number): void;
  /** No answer within the adapter's timeout; `applied` says whether the effect landed anyway. Default false. */
  timeout(target: FaultTarget, options?: { readonly applied?: boolean }): void;
  /** The destination refuses and applies nothing. Default status 422. */
  definiteFailure(target: FaultTarget, options?: { readonly status?: number; readonly detail?: string }): void;
  /** The attempt pauses at `checkpoint` and renews nothing until `resume()`; then it acts on its stale view. */
  pauseAt(checkpoint: CheckpointName, target: FaultTarget): PausedAttempt;
  /** The attempt stops for good at `checkpoint` and never renews, as if its worker was killed there. */
  killAt(checkpoint: CheckpointName, target: FaultTarget): CheckpointFault;
};

/**
 * A running test environment: its database, its worker, the faults to ask for, and reads of
 * everything the engine recorded. Times come from the database clock.
 */
export type TestEnvironment = {
  /** The fresh database's connection string (the engine's tables are in schema `fenceline`). */
  readonly databaseUrl: string;
  /** The worker's session id. */
  readonly workerSession: string;
  readonly faults: Faults;
  /** Creates a request of `workflow`, as an app would through the client. */
  createRequest<W extends WorkflowDefinition>(
    workflow: W,
    input: WorkflowInput<W>,
    options?: { readonly idempotencyKey?: string; readonly priority?: number; readonly concurrencyKey?: string },
  ): Promise<RequestRecord>;
  /** The request's status and its end-user projection now. */
  request(requestId: string): Promise<RequestWithProgress>;
  /** What the request's end user sees now (its tracking page). */
  progress(requestId: string): Promise<TrackingView>;
  /**
   * Everything recorded about one step: receipts (verification method, external reference),
   * attempts and their checkpoints, lease terms, fencing rejections, late observations,
   * recovery decisions, permits and review cases.
   */
  step(requestId: string, step: string): Promise<StepDetail>;
  /** Waits until the request has one of `statuses`; on timeout, fails saying where each step stands. */
  waitForRequest(requestId: string, statuses: RequestStatus | readonly RequestStatus[], options?: WaitOptions): Promise<RequestWithProgress>;
  /** Waits until `until` holds for the step's record; `what` names the wait in its failure. */
  waitForStep(requestId: string, step: string, what: string, until: (detail: StepDetail) => boolean, options?: WaitOptions): Promise<StepDetail>;
  /** The request's open review cases. */
  reviewCases(requestId: string): Promise<OpenReviewCase[]>;
  /** Waits for an open review case of the request (of `step` when given). */
  waitForReviewCase(requestId: string, step?: string, options?: WaitOptions): Promise<OpenReviewCase>;
  /** Resolves a review case as support would: recorded with who and why, audited. */
  resolveReviewCase(caseId: string, resolution: ReviewResolution, options?: { readonly by?: string }): Promise<void>;
  /**
   * Cancels the request as its app would; the answer says what will be undone (`compensation`,
   * for a kind that undoes on cancel). A request no longer active is refused (RequestEndedError).
   */
  cancel(requestId: string, reason?: string): Promise<RequestWithProgress & { readonly compensation: CompensationView | null }>;
  /** How the request's effects are being undone, or null when they are not (docs/adopting/compensation.md). */
  compensation(requestId: string): Promise<CompensationView | null>;
  /**
   * The database clock passes the expiry of the step's open lease (of the stopped attempt's
   * term when given one), without the test waiting for the TTL. Recovery then decides from the
   * evidence, as it would after a real expiry. A stopped attempt's lease that already passed its
   * expiry on its own (the machine was slow) counts as expired: this never depends on timing.
   */
  expireLease(of: StoppedAttempt | { readonly requestId: string; readonly step: string }): Promise<void>;
  /** Runs one recovery pass now (the worker also runs one every 100 ms); returns how many leases it decided. */
  recover(): Promise<number>;
  /**
   * Sends an event, as an app would with `events.send`: the oldest step waiting for its name and
   * key takes it, or it is kept for a wait that begins later. The same idempotency key sends it once.
   */
  sendEvent(name: string, key: string, payload: unknown, options?: { readonly idempotencyKey?: string }): Promise<SentEvent>;
  /**
   * The database clock passes `ms` for the requests' waits, without the test sleeping: timers and
   * wait timeouts come due as if that time had passed, and the keepers then fire what is due (a
   * timer never before its time). Resolves once what came due is settled; returns how many came due.
   */
  passTime(ms: number): Promise<number>;
  /** What the step waits (or waited) for: a timer's due time, an event wait's name, key and timeout; null if it never waited. */
  waitOf(requestId: string, step: string): Promise<StepWait | null>;
  /** Waits until the step has begun waiting (its timer or event wait is armed), and returns what it waits for. */
  waitForWait(requestId: string, step: string, options?: WaitOptions): Promise<StepWait>;
  /** Stops the worker, drops the database, and stops the embedded PostgreSQL once no environment uses it. */
  close(): Promise<void>;
};

const DEFAULT_TIMEOUT_MS = 10_000;
const POLL_MS = 25;
const LOG_LINES_KEPT = 40;
const WORKER_STOP_WAIT_MS = 5_000;

/**
 * Starts a test environment for `options.workflows`. Close it when the tests are done (in
 * `afterAll`): it stops its worker and drops its database.
 *
 * @example
 * ```ts
 * const env = await createTestEnvironment({ workflows: [checkout] });
 * env.faults.answerLost({ step: "charge" });
 * const request = await env.createRequest(checkout, { orderId: "o-1", amountCents: 500 });
 * await env.waitForRequest(request.id, "completed");
 * expect((await env.step(request.id, "charge")).receipts[0]?.verificationMethod).toBe("idempotent_replay");
 * await env.close();
 * ```
 */
export async function createTestEnvironment(options: TestEnvironmentOptions): Promise<TestEnvironment> {
  const database = await environmentDatabase();
  try {
    return await start(database, options);
  } catch (error) {
    await database.drop();
    throw error;
  }
}

async function start(database: EnvironmentDatabase, options: TestEnvironmentOptions): Promise<TestEnvironment> {
  const { pool } = database;
  for (const stepClass of options.stepClasses ?? []) {
    await run(pool, sql.upsertStepClass, [stepClass.name, stepClass.leaseTtlMs, stepClass.renewEveryMs, stepClass.attemptDeadlineMs, stepClass.graceMs]);
  }
  const plan = new FaultPlan();
  const logLines: string[] = [];
  const worker = new Worker({
    coordinator: plan.coordinator(directCoordinator(pool)),
    workflows: plan.workflows(options.workflows),
    hooks: plan.hooks,
    concurrency: options.concurrency ?? 10,
    pollIntervalMs: 100,
    recoveryIntervalMs: 100,
    shutdownTimeoutMs: 1_000,
    log:
      options.log ??
      ((line) => {
        logLines.push(line);
        if (logLines.length > LOG_LINES_KEPT) logLines.shift();
      }),
  });
  const workerSession = await worker.start();

  /** A step's whole record, read in one snapshot (readStepDetail's own: a refused receipt committed mid-read is seen wholly or not at all). */
  const readStep = (id: string): Promise<StepDetail> => readStepDetail(pool, id);

  const stepId = async (requestId: string, step: string): Promise<string> => {
    const [row] = await run<{ id: string }>(pool, sql.stepIdByName, [requestId, step]);
    if (!row) throw new Error(`request ${requestId} has no step named ${JSON.stringify(step)}`);
    return row.id;
  };

  /** Where the request stands, in one line per step, for a wait's failure. */
  const whereItStands = async (requestId: string): Promise<string> => {
    const request = await readRequestWithProgress(pool, requestId, null).catch(() => null);
    if (!request) return `request ${requestId} does not exist`;
    const steps = await run<{ name: string; state: string; state_reason: string | null; fencing_term: string }>(pool, sql.stepStates, [requestId]);
    const cases = await run<{ step: string; reason: string }>(pool, sql.openReviewCases, [requestId]);
    return [
      `request ${requestId} (${request.kind}@${request.version}) is ${request.status}${request.statusReason ? ` (${request.statusReason})` : ""}; its end user sees "${request.progress.headline.label}"`,
      ...steps.map((step) => `  step ${step.name}: ${step.state}${step.state_reason ? ` (${step.state_reason})` : ""}, term ${step.fencing_term}`),
      ...cases.map((open) => `  open review case on ${open.step}: ${open.reason}`),
      ...(logLines.length > 0 ? ["  worker log:", ...logLines.slice(-10).map((line) => `    ${line}`)] : []),
    ].join("\n");
  };

  const waitUntil = async <T>(what: string, requestId: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = await probe();
      if (found !== null) return found;
      if (performance.now() >= deadline) throw new Error(`waited ${timeoutMs} ms for ${what}; ${await whereItStands(requestId)}`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };

  const reviewCases = async (requestId: string): Promise<OpenReviewCase[]> =>
    (await run<OpenReviewCase>(pool, sql.openReviewCases, [requestId])).map(({ id, step, reason }) => ({ id, step, reason }));

  const faults: Faults = {
    answerLost: (target) => plan.addCallFault(target, { kind: "answer_lost" }),
    rateLimited: (target, retryAfterMs) => plan.addCallFault(target, { kind: "rate_limited", retryAfterMs }),
    timeout: (target, timeout = {}) => plan.addCallFault(target, { kind: "timeout", applied: timeout.applied ?? false }),
    definiteFailure: (target, failure = {}) =>
      plan.addCallFault(target, { kind: "definite_failure", status: failure.status ?? 422, detail: failure.detail ?? "refused (injected fault)" }),
    pauseAt: (checkpoint, target) => plan.addCheckpointFault(target, checkpoint, "pause"),
    killAt: (checkpoint, target) => {
      const { reached } = plan.addCheckpointFault(target, checkpoint, "kill");
      return { reached };
    },
  };

  let closed = false;
  return {
    databaseUrl: database.url,
    workerSession,
    faults,
    createRequest: async (workflow, input, request = {}) =>
      (
        await createRequest(pool, {
          kind: workflow.kind,
          version: workflow.version,
          input,
          idempotencyKey: request.idempotencyKey ?? null,
          requester: "test",
          deadlineAt: null,
          priority: request.priority ?? null,
          concurrencyKey: request.concurrencyKey ?? null,
        })
      ).request,
    request: (requestId) => readRequestWithProgress(pool, requestId, null),
    progress: async (requestId) => {
      const view = await trackingViewByWorkflowId(pool, requestId);
      if (!view) throw new Error(`no request ${requestId}`);
      return view;
    },
    step: async (requestId, step) => readStep(await stepId(requestId, step)),
    waitForRequest: (requestId, statuses, wait = {}) => {
      const wanted: readonly RequestStatus[] = typeof statuses === "string" ? [statuses] : statuses;
      return waitUntil(`request ${requestId} to be ${wanted.join(" or ")}`, requestId, async () => {
        const request = await readRequestWithProgress(pool, requestId, null);
        return wanted.includes(request.status) ? request : null;
      }, wait.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    },
    waitForStep: async (requestId, step, what, until, wait = {}) => {
      const id = await stepId(requestId, step);
      return waitUntil(`step ${step} ${what}`, requestId, async () => {
        const detail = await readStep(id);
        return until(detail) ? detail : null;
      }, wait.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    },
    reviewCases,
    waitForReviewCase: (requestId, step, wait = {}) =>
      waitUntil(`an open review case${step ? ` on step ${step}` : ""}`, requestId, async () => {
        return (await reviewCases(requestId)).find((open) => step === undefined || open.step === step) ?? null;
      }, wait.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    cancel: (requestId, reason = "cancelled by the test") => cancelRequest(pool, requestId, null, reason),
    compensation: (requestId) => readCompensation(pool, requestId),
    resolveReviewCase: async (caseId, resolution, by = {}) => {
      const [row] = await run<{ version: number }>(pool, sql.reviewCaseVersion, [caseId]);
      if (!row) throw new Error(`no review case ${caseId}`);
      const note = resolution.note ?? "";
      const body = resolution.resolution === "confirm_delivered" ? { ...resolution, externalReference: resolution.externalReference, note } : { ...resolution, note };
      await resolveReviewCase(pool, caseId, { ...body, version: row.version }, by.by ?? "support@test");
    },
    expireLease: async (of) => {
      const [id, term] = "stepId" in of ? [of.stepId, of.fencingTerm.toString()] : [await stepId(of.requestId, of.step), null];
      const rows = await run(pool, sql.expireLease, [id, term]);
      if (rows.length === 1) return;
      // A stopped attempt's lease may have passed its expiry on its own before the test got here
      // (a loaded machine, a long pause): what the test asked for has happened either way.
      if (term !== null && (await run<{ expired: boolean }>(pool, sql.leaseAlreadyExpired, [id, term]))[0]?.expired) return;
      throw new Error(`step ${"step" in of ? of.step : id} has no open lease${term ? ` of term ${term}` : ""} to expire`);
    },
    recover: async () => (await runRecoveryScan(pool, { decidedBy: workerSession, batchSize: 100 })).length,
    sendEvent: (name, key, payload, options = {}) => sendEvent(pool, { name, key, payload, sender: "test", idempotencyKey: options.idempotencyKey ?? null }),
    passTime: async (ms) => {
      if (!Number.isInteger(ms) || ms < 0) throw new Error(`passTime: ms must be a non-negative integer, got ${ms}`);
      const [{ due }] = (await run<{ due: number }>(pool, sql.passTimeForWaits, [ms])) as [{ due: number }];
      // Until nothing is due: the worker's own keeper settles some of it too, and a pass that
      // meets rows it holds settles nothing until it commits.
      for (;;) {
        const pass = await settleDue(pool, dueWork, 500);
        if (pass.settled === 0 && (pass.nextDueInMs === null || pass.nextDueInMs > 0)) return due;
        if (pass.settled === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    waitOf: async (requestId, step) => {
      const id = await stepId(requestId, step);
      return (await readStepWaits(pool, [id])).get(id) ?? null;
    },
    waitForWait: async (requestId, step, wait = {}) => {
      const id = await stepId(requestId, step);
      return waitUntil(`step ${step} to begin waiting`, requestId, async () => (await readStepWaits(pool, [id])).get(id) ?? null, wait.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      plan.close();
      try {
        // Bounded: close must end even if a test left the worker mid-statement; dropping the
        // database then ends its connections.
        await Promise.race([worker.stop("test environment closed"), new Promise((resolve) => setTimeout(resolve, WORKER_STOP_WAIT_MS).unref())]);
      } finally {
        await database.drop();
      }
    },
  };
}
