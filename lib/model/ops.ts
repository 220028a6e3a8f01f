/**
 * Operations: each is applied to the model (`apply`, pure and total) and to the real engine
 * (`exec`), and both return an outcome in the same vocabulary, so a command can compare them.
 * Parameters are taken from the model *before* either runs (`params`), because a worker acts on
 * the view it has when it starts, however stale.
 */
import { createWorkflow, cancelWorkflow } from "@/lib/engine/workflow";
import { claimSteps, renewLeases } from "@/lib/engine/lease";
import { beginInvocation, observeEffectAbsent, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { commitReceipts } from "@/lib/engine/receipt";
import { postLateObservation } from "@/lib/engine/late-observation";
import { revokeLease, runRecoveryScan } from "@/lib/engine/recovery";
import { AuthorityLostError, CheckpointOrderError } from "@/lib/engine/errors";
import { setLeaseExpiry } from "@/lib/engine/test-support";
import { ReviewConflictError } from "@/lib/review/errors";
import { resolveReviewCase } from "@/lib/review/resolve";
import type { LeaseHandle } from "@/lib/engine/types";
import type { ReviewResolution } from "@/lib/engine/vocabulary";
import {
  complete, currentAttempt, destinationCreate, destinationStatus, newStep, recover, refusal, resolveCase, SLOTS,
  type Kind, type Model, type ResolutionBody, type View,
} from "./model";
import { adapterFor, STEP_CLASS, type Real } from "./real";

export type Outcome = unknown;

export abstract class Op<P = unknown> {
  /** Two operations race only when their actors differ. */
  abstract readonly actor: string;
  abstract check(m: Model): boolean;
  abstract params(m: Model): P;
  abstract apply(m: Model, p: P): Outcome;
  abstract exec(r: Real, p: P): Promise<Outcome>;
  abstract toString(): string;
}

// ---------------------------------------------------------------- workflow, time, recovery

export class Create extends Op<null> {
  readonly actor = "api";
  constructor(readonly slot: number, readonly kind: Kind, readonly budget: number) { super(); }
  check = (m: Model) => m.steps[this.slot] === null;
  params = () => null;
  apply(m: Model) {
    m.steps[this.slot] = newStep(this.slot, this.kind, this.budget);
    return "created";
  }
  async exec(r: Real) {
    const created = await createWorkflow(r.pool, {
      // A kind per slot, so a claim can target exactly one slot's step.
      kind: adapterFor(this.kind, this.slot), input: { slot: this.slot }, requester: "model",
      steps: [{ name: "only", adapter: adapterFor(this.kind, this.slot), operation: "create", stepClass: STEP_CLASS, attemptBudget: this.budget }],
    });
    r.stepIds[this.slot] = created.stepIds.get("only")!;
    r.workflowIds[this.slot] = created.workflowId;
    r.kinds[this.slot] = this.kind;
    return "created";
  }
  toString = () => `create(s${this.slot}, ${this.kind}, budget ${this.budget})`;
}

export class Cancel extends Op<null> {
  get actor() { return `api:s${this.slot}`; }
  constructor(readonly slot: number) { super(); }
  check = (m: Model) => m.steps[this.slot] !== null;
  params = () => null;
  apply(m: Model) {
    const step = m.step(this.slot);
    if (step.workflow !== "active") return false;
    step.workflow = "cancelled";
    if (step.state === "ready") step.state = "cancelled";
    return true;
  }
  exec = (r: Real) => cancelWorkflow(r.pool, r.workflowIds[this.slot]!, "model cancel");
  toString = () => `cancel(s${this.slot})`;
}

/** Time passes for one lease: its expiry moves 1 s into the past on the database clock. */
export class Expire extends Op<null> {
  get actor() { return `clock:s${this.slot}`; }
  constructor(readonly slot: number) { super(); }
  check = (m: Model) => m.steps[this.slot]?.lease?.ended === null;
  params = () => null;
  apply(m: Model) {
    const lease = m.step(this.slot).lease;
    if (!lease || lease.ended !== null) return "no open lease";
    lease.pastExpiry = true;
    return "expired";
  }
  async exec(r: Real) {
    try {
      await setLeaseExpiry(r.pool, r.stepId(this.slot), -1_000);
      return "expired";
    } catch (error) {
      if (error instanceof Error && error.message.includes("has no open lease")) return "no open lease";
      throw error;
    }
  }
  toString = () => `expire(s${this.slot})`;
}

const scanModel = (m: Model) => scanSkipping(m, null);

/**
 * The scan with one slot left out: the scan skips (SKIP LOCKED) a lease that a concurrent
 * operation holds locked, and a later scan decides it.
 */
export const scanSkipping = (m: Model, skipped: number | null) =>
  m.steps.flatMap((step) =>
    step?.lease && step.lease.ended === null && step.lease.pastExpiry && step.slot !== skipped ? [`s${step.slot}:${recover(step, "expired")}`] : [],
  ).sort();

const labelled = (r: Real, decided: readonly { stepId: string; decision: { category: string } }[]) =>
  decided.map((d) => `s${r.stepIds.indexOf(d.stepId)}:${d.decision.category}`).sort();

export class Scan extends Op<null> {
  readonly actor = "scanner";
  check = () => true;
  params = () => null;
  apply = scanModel;
  exec = async (r: Real) => labelled(r, await runRecoveryScan(r.pool, { decidedBy: "model-scan-1", batchSize: 10 }));
  toString = () => "scan()";
}

/** Two recovery scanners at once: together they decide each expired lease exactly once. */
export class TwoScans extends Op<null> {
  readonly actor = "scanners";
  check = () => true;
  params = () => null;
  apply = scanModel;
  async exec(r: Real) {
    const scan = (name: string) => () => runRecoveryScan(r.pool, { decidedBy: name, batchSize: 10 });
    const [a, b] = await r.concurrently(scan("model-scan-1"), scan("model-scan-2"));
    if (a.status === "rejected") throw a.reason;
    if (b.status === "rejected") throw b.reason;
    return labelled(r, [...a.value, ...b.value]);
  }
  toString = () => "twoScans()";
}

/** An engineer revokes the step's open lease; recovery still decides from evidence. */
export class Revoke extends Op<null> {
  get actor() { return `engineer:s${this.slot}`; }
  constructor(readonly slot: number) { super(); }
  check = (m: Model) => m.steps[this.slot]?.lease?.ended === null;
  params = () => null;
  apply(m: Model) {
    const step = m.step(this.slot);
    return step.lease && step.lease.ended === null ? recover(step, "revoked") : null;
  }
  exec = async (r: Real) => (await revokeLease(r.pool, r.stepId(this.slot), "model revoke", "model"))?.decision.category ?? null;
  toString = () => `revoke(s${this.slot})`;
}

// ---------------------------------------------------------------- support

/**
 * A person resolves the slot's latest review case (open, or already resolved: a repeat or a
 * conflicting second decision). `stale`: they send a version the case does not have. `ref`, for
 * confirm delivered: "found" is the destination's first effect if it applied one, "other" a
 * reference the destination never gave (the person's word is all the engine has).
 */
export class Resolve extends Op<{ index: number; body: ResolutionBody }> {
  get actor() { return `support${this.person}:s${this.slot}`; }
  constructor(
    readonly slot: number,
    readonly resolution: ReviewResolution,
    readonly stale: boolean,
    readonly ref: "found" | "other" = "found",
    readonly person = 0,
  ) { super(); }
  check = (m: Model) => (m.steps[this.slot]?.reviews.length ?? 0) > 0;
  params(m: Model) {
    const step = m.step(this.slot);
    const index = step.reviews.length - 1;
    const seen = step.reviews[index]!.version;
    const version = this.stale ? (seen > 1 ? seen - 1 : seen + 1) : seen;
    const ref = this.resolution !== "confirm_delivered" ? null
      : this.ref === "found" && step.applied.length > 0 ? step.applied[0]! : `ext-s${this.slot}`;
    return { index, body: { resolution: this.resolution, version, ref } };
  }
  apply = (m: Model, p: { index: number; body: ResolutionBody }) => resolveCase(m.step(this.slot), p.index, p.body);
  async exec(r: Real, { index, body }: { index: number; body: ResolutionBody }) {
    const { rows } = await r.pool.query<{ id: string }>(
      "SELECT id FROM review_case WHERE step_id = $1 ORDER BY opened_at, id OFFSET $2 LIMIT 1", [r.stepId(this.slot), index],
    );
    const caseId = rows[0]!.id;
    const actor = `model-support-${this.person}`;
    const request =
      body.resolution === "confirm_delivered" ? { resolution: body.resolution, version: body.version, externalReference: body.ref!, note: "seen at the destination" }
        : body.resolution === "confirm_not_delivered" ? { resolution: body.resolution, version: body.version, note: "not at the destination" }
        : { resolution: body.resolution, version: body.version, customerReason: "It could not be delivered.", note: "gave up" };
    try {
      const result = await resolveReviewCase(r.pool, caseId, request, actor);
      if (result.caseId !== caseId || (!result.replayed && result.resolvedBy !== actor)) throw new Error(`resolve: unexpected result ${JSON.stringify(result)}`);
      return { resolution: result.resolution, version: result.version, replayed: result.replayed };
    } catch (error) {
      if (error instanceof ReviewConflictError) return { refused: error.conflict };
      throw error;
    }
  }
  toString = () =>
    `resolve(s${this.slot}, ${this.resolution}${this.resolution === "confirm_delivered" ? ` ${this.ref} ref` : ""}${this.stale ? ", stale version" : ""}${this.person ? `, person ${this.person}` : ""})`;
}

// ---------------------------------------------------------------- workers

export class Pause extends Op<null> {
  get actor() { return `w${this.worker}`; }
  constructor(readonly worker: number, readonly paused: boolean) { super(); }
  check = (m: Model) => m.workers[this.worker]!.paused !== this.paused;
  params = () => null;
  apply(m: Model) {
    m.workers[this.worker]!.paused = this.paused;
    return this.paused;
  }
  exec = async () => this.paused;
  toString = () => `${this.paused ? "pause" : "resume"}(w${this.worker})`;
}

type Held = { view: View; lease: LeaseHandle };

abstract class WorkerOp<P = Held> extends Op<P> {
  /** 0: the worker's latest lease on the slot; 1: the one before it (a stale attempt still running). */
  age = 0;
  constructor(readonly worker: number, readonly slot: number) { super(); }
  get actor() { return `w${this.worker}`; }
  protected held(m: Model): View | undefined {
    if (m.workers[this.worker]!.paused || !m.steps[this.slot]) return undefined;
    return m.view(this.worker, this.slot, { age: this.age });
  }
  protected handle(r: Real, view: View): LeaseHandle {
    return { stepId: r.stepId(this.slot), fencingTerm: BigInt(view.term), sessionId: r.sessions[this.worker]! };
  }
  protected name(what: string) { return `w${this.worker}.${what}(s${this.slot}${this.age ? ", stale view" : ""})`; }
}

const snapshotView = (m: Model, worker: number, slot: number, age = 0): View => structuredClone(m.view(worker, slot, { age })!);

/** Fenced writes share one shape: refused → the refusal reason; accepted → `accept`'s result. */
async function fenced<T>(write: () => Promise<T>): Promise<{ refused: string } | T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof AuthorityLostError) return { refused: error.reason };
    if (error instanceof CheckpointOrderError) return { refused: "checkpoint_order" };
    throw error;
  }
}

/** The model side of a fenced checkpoint: refused (recorded, the worker learns it lost) or applied. */
function fencedModel(m: Model, worker: number, slot: number, view: View, accept: () => Outcome, lateRef: string | null = null): Outcome {
  const step = m.step(slot);
  const why = refusal(step, worker, view.term);
  const mine = m.view(worker, slot, { term: view.term });
  if (why !== null) {
    m.rejections += 1;
    if (lateRef !== null) step.lateRefs.push(lateRef);
    if (mine) mine.lost = true;
    return { refused: why };
  }
  step.lease!.checkpointVersion += 1;
  if (mine) mine.checkpointVersion = step.lease!.checkpointVersion;
  return accept();
}

export class Claim extends WorkerOp<null> {
  check = (m: Model) => !m.workers[this.worker]!.paused && m.steps[this.slot] !== null;
  params = () => null;
  apply(m: Model) {
    const step = m.step(this.slot);
    if (step.state !== "ready" || step.workflow !== "active") return { claimed: null };
    step.term += 1;
    step.attemptsStarted += 1;
    step.state = "leased";
    step.lease = { term: step.term, holder: this.worker, checkpointVersion: 1, ended: null, pastExpiry: false };
    step.attempts.push({ term: step.term, mode: step.nextMode, checkpoint: "created", began: false, observedEffect: null, ref: null });
    const views = (m.workers[this.worker]!.views[this.slot] ??= []);
    if (views.length === 2) views.shift();
    views.push({
      term: step.term, mode: step.nextMode, identity: step.identity, checkpointVersion: 1, checkpoint: "created",
      answer: null, recorded: false, lost: false, posted: false,
    });
    return { claimed: step.term, mode: step.nextMode, identity: step.identity };
  }
  async exec(r: Real) {
    const claimed = await claimSteps(r.pool, r.sessions[this.worker]!, [{ kind: adapterFor(r.kinds[this.slot]!, this.slot), version: 1 }], 1);
    const [step] = claimed;
    if (!step) return { claimed: null };
    return { claimed: Number(step.fencingTerm), mode: step.mode, identity: step.requestIdentity };
  }
  toString = () => this.name("claim");
}

export class Renew extends WorkerOp<View> {
  check = (m: Model) => this.held(m)?.lost === false;
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    const why = refusal(m.step(this.slot), this.worker, view.term);
    if (why === null) return { renewed: true };
    const mine = m.view(this.worker, this.slot, { term: view.term });
    if (mine) mine.lost = true;
    return { renewed: false, reason: why };
  }
  async exec(r: Real, view: View) {
    const [result] = await renewLeases(r.pool, r.sessions[this.worker]!, [{ ...this.handle(r, view), checkpointVersion: view.checkpointVersion }]);
    if (result!.renewed) return { renewed: true };
    return { renewed: false, reason: result!.reason };
  }
  toString = () => this.name("renew");
}

export class PersistIdentity extends WorkerOp<View> {
  check = (m: Model) => { const v = this.held(m); return !!v && !v.lost && v.checkpoint === "created"; };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  private proposal = (view: View) => `id-s${this.slot}-t${view.term}`;
  apply(m: Model, view: View) {
    return fencedModel(m, this.worker, this.slot, view, () => {
      const step = m.step(this.slot);
      step.identity ??= this.proposal(view);
      currentAttempt(step)!.checkpoint = "identity_persisted";
      const mine = m.view(this.worker, this.slot, { term: view.term })!;
      mine.checkpoint = "identity_persisted";
      mine.identity = step.identity;
      return { identity: step.identity };
    });
  }
  exec = (r: Real, view: View) =>
    fenced(async () => ({ identity: (await persistRequestIdentity(r.pool, this.handle(r, view), this.proposal(view), "1")).requestIdentity }));
  toString = () => this.name("persistIdentity");
}

export class BeginInvocation extends WorkerOp<View> {
  check = (m: Model) => {
    const v = this.held(m);
    return !!v && !v.lost && v.checkpoint === "identity_persisted" && v.mode !== "status_query";
  };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    return fencedModel(m, this.worker, this.slot, view, () => {
      const attempt = currentAttempt(m.step(this.slot))!;
      attempt.checkpoint = "invocation_began";
      attempt.began = true;
      m.view(this.worker, this.slot, { term: view.term })!.checkpoint = "invocation_began";
      return "began";
    });
  }
  exec = (r: Real, view: View) => fenced(async () => (await beginInvocation(r.pool, this.handle(r, view)), "began"));
  toString = () => this.name("beginInvocation");
}

/**
 * The call itself, to the destination; no database write. A worker that has not yet learned it
 * lost authority (a paused one, say) still makes it: that is the zombie the fences are for.
 */
export class Invoke extends WorkerOp<View> {
  constructor(worker: number, slot: number, readonly fault: "ok" | "fail" | "drop") { super(worker, slot); }
  check = (m: Model) => { const v = this.held(m); return !!v && !v.lost && v.checkpoint === "invocation_began" && v.answer === null; };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    const answer = destinationCreate(m.step(this.slot), view.term, this.fault);
    m.view(this.worker, this.slot, { term: view.term })!.answer = answer;
    return answer;
  }
  async exec(r: Real, view: View) {
    return r.destinations.create(r.kinds[this.slot]!, {
      resource: `s${this.slot}`, identity: view.identity!, epoch: 1n, term: BigInt(view.term), fault: this.fault,
    });
  }
  toString = () => this.name(`invoke[${this.fault}]`);
}

/** A status-query attempt asks the queryable destination about the step's request identity. */
export class Query extends WorkerOp<View> {
  check = (m: Model) => {
    const v = this.held(m);
    return !!v && !v.lost && v.mode === "status_query" && v.checkpoint === "identity_persisted" && v.answer === null;
  };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    const answer = destinationStatus(m.step(this.slot));
    m.view(this.worker, this.slot, { term: view.term })!.answer = answer;
    return answer;
  }
  async exec(r: Real, view: View) {
    const status = r.destinations.status(view.identity!);
    return status.status === "applied" ? { kind: "status", ref: status.ref } : { kind: "absent" };
  }
  toString = () => this.name("query");
}

const refOf = (view: View): string | null =>
  view.answer?.kind === "effect" || view.answer?.kind === "status" ? view.answer.ref : null;

export class ObserveResponse extends WorkerOp<View> {
  check = (m: Model) => {
    const v = this.held(m);
    return !!v && !v.lost && v.checkpoint === "invocation_began" && v.answer?.kind === "effect" && !v.recorded;
  };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    const ref = refOf(view)!;
    return fencedModel(m, this.worker, this.slot, view, () => {
      const attempt = currentAttempt(m.step(this.slot))!;
      Object.assign(attempt, { checkpoint: "response_observed", observedEffect: "present", ref });
      Object.assign(m.view(this.worker, this.slot, { term: view.term })!, { checkpoint: "response_observed", recorded: true });
      return "observed";
    }, ref);
  }
  exec = (r: Real, view: View) => fenced(async () => (await observeResponse(r.pool, this.handle(r, view), refOf(view), { ref: refOf(view) }), "observed"));
  toString = () => this.name("observeResponse");
}

/** The destination said nothing was applied (a definite failure, a stale term, or "not found"). */
export class ObserveEffectAbsent extends WorkerOp<View> {
  check = (m: Model) => { const v = this.held(m); return !!v && !v.lost && v.answer?.kind === "absent" && !v.recorded; };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    return fencedModel(m, this.worker, this.slot, view, () => {
      Object.assign(currentAttempt(m.step(this.slot))!, { checkpoint: "response_observed", observedEffect: "absent" });
      Object.assign(m.view(this.worker, this.slot, { term: view.term })!, { checkpoint: "response_observed", recorded: true });
      return "observed absent";
    });
  }
  exec = (r: Real, view: View) => fenced(async () => (await observeEffectAbsent(r.pool, this.handle(r, view), { absent: true }), "observed absent"));
  toString = () => this.name("observeEffectAbsent");
}

export class CommitReceipt extends WorkerOp<View> {
  check = (m: Model) => {
    const v = this.held(m);
    return !!v && !v.lost && ((v.answer?.kind === "effect" && v.recorded) || v.answer?.kind === "status");
  };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  private method = (view: View) =>
    view.answer?.kind === "status" ? "status_query" : view.answer?.kind === "effect" && view.answer.replayed ? "idempotent_replay" : "direct_response";
  apply(m: Model, view: View) {
    const step = m.step(this.slot);
    const ref = refOf(view)!;
    const why = refusal(step, this.worker, view.term);
    const mine = m.view(this.worker, this.slot, { term: view.term });
    if (why !== null) {
      m.rejections += 1;
      step.lateRefs.push(ref);
      if (mine) mine.lost = true;
      return { refused: why };
    }
    step.lease!.ended = "receipt";
    Object.assign(currentAttempt(step)!, { checkpoint: "receipt_committed", ref });
    complete(step, { ref, method: this.method(view), term: view.term }, "completed");
    if (mine) mine.lost = true; // done with this lease
    return "committed";
  }
  async exec(r: Real, view: View) {
    const ref = refOf(view)!;
    const [result] = await commitReceipts(r.pool, r.sessions[this.worker]!, [{
      lease: this.handle(r, view),
      conclusion: { kind: "effect", externalReference: ref, result: { ref }, verification: this.method(view) as "direct_response" },
    }]);
    return result!.committed ? "committed" : { refused: result!.error.reason };
  }
  toString = () => this.name("commitReceipt");
}

/** A worker that lost its lease posts what it learned; current state does not change. */
export class PostLateObservation extends WorkerOp<View> {
  check = (m: Model) => { const v = this.held(m); return !!v && v.lost && !v.posted && refOf(v) !== null; };
  params = (m: Model) => snapshotView(m, this.worker, this.slot, this.age);
  apply(m: Model, view: View) {
    m.step(this.slot).lateRefs.push(refOf(view)!);
    m.view(this.worker, this.slot, { term: view.term })!.posted = true;
    return "posted";
  }
  async exec(r: Real, view: View) {
    await postLateObservation(r.pool, this.handle(r, view), { operation: "invoke", externalReference: refOf(view), result: { ref: refOf(view) } });
    return "posted";
  }
  toString = () => this.name("postLateObservation");
}

/**
 * A worker does the next thing its own view calls for on one slot. Resolved at check time, so a
 * shrunk sequence still reads as concrete operations.
 */
export function nextFor(m: Model, worker: number, slot: number, fault: "ok" | "fail" | "drop", age = 0): Op | null {
  const candidates: WorkerOp<View>[] = [
    new PersistIdentity(worker, slot), new BeginInvocation(worker, slot), new Invoke(worker, slot, fault), new Query(worker, slot),
    new ObserveResponse(worker, slot), new ObserveEffectAbsent(worker, slot), new CommitReceipt(worker, slot),
    new PostLateObservation(worker, slot),
  ];
  for (const op of candidates) op.age = age;
  return candidates.find((op) => op.check(m)) ?? null;
}

export const slotsOf = () => Array.from({ length: SLOTS }, (_, i) => i);
