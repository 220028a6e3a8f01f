/**
 * fast-check commands over the operations, and the property itself. After every command the
 * engine's state (read back by SQL) and the destinations' audits must equal the model's, and
 * SPEC.md's invariants must hold on the database.
 */
import { deepStrictEqual } from "node:assert/strict";
import fc from "fast-check";
import type { Pool } from "pg";
import { REVIEW_RESOLUTIONS } from "@/lib/engine/vocabulary";
import { KINDS, Model, SLOTS, WORKERS } from "./model";
import {
  Cancel, Claim, Create, Expire, nextFor, Pause, Renew, Resolve, Revoke, Scan, scanSkipping, TwoScans, type Op, type Outcome,
} from "./ops";
import { checkInvariants, prepareDatabase, project, readSnapshot, Real, type Snapshot } from "./real";

async function assertAgrees(m: Model, r: Real, after: string, snapshot?: Snapshot): Promise<void> {
  const [read, violations] = await Promise.all([snapshot ?? readSnapshot(r), checkInvariants(r)]);
  if (violations.length > 0) throw new Error(`after ${after}: ${violations.join("; ")}`);
  deepStrictEqual(read, project(m), `engine state differs from the model after ${after}`);
}

type Fault = "ok" | "fail" | "drop";

/** Either a fixed operation, or "worker W does the next thing on slot S", resolved against the model. */
type OpSpec =
  | { fixed: Op }
  | { next: { worker: number; slot: number; fault: Fault; age: number } }
  /**
   * The worker that last claimed the slot does its next thing: keeps attempts moving. With age 1,
   * it acts on its view of the lease it held before that (after a re-claim, a stale handle).
   */
  | { holderNext: { slot: number; fault: Fault; age?: number } };
function resolve(spec: OpSpec, m: Model): Op | null {
  if ("fixed" in spec) return spec.fixed.check(m) ? spec.fixed : null;
  if ("next" in spec) return nextFor(m, spec.next.worker, spec.next.slot, spec.next.fault, spec.next.age);
  const holder = m.steps[spec.holderNext.slot]?.lease?.holder;
  return holder === undefined ? null : nextFor(m, holder, spec.holderNext.slot, spec.holderNext.fault, spec.holderNext.age ?? 0);
}
const specName = (spec: OpSpec): string =>
  "fixed" in spec ? spec.fixed.toString()
    : "next" in spec ? `w${spec.next.worker}.next(s${spec.next.slot}, ${spec.next.fault}${spec.next.age ? ", stale view" : ""})`
    : `holder.next(s${spec.holderNext.slot}, ${spec.holderNext.fault}${spec.holderNext.age ? ", stale view" : ""})`;

class Single implements fc.AsyncCommand<Model, Real> {
  private op: Op | null = null;
  constructor(private readonly spec: OpSpec) {}
  check(m: Readonly<Model>): boolean {
    this.op = resolve(this.spec, m as Model);
    return this.op !== null;
  }
  async run(m: Model, r: Real): Promise<void> {
    const op = resolve(this.spec, m)!;
    this.op = op;
    r.stats.commands += 1;
    r.dirty = true;
    await runOp(m, r, op);
  }
  // The spec, not the operation it resolved to: one command object serves many shrink attempts.
  toString = () => ("fixed" in this.spec ? this.spec.fixed.toString() : specName(this.spec));
}

/** One operation on model and engine: same outcome, then same state and the invariants. */
async function runOp(m: Model, r: Real, op: Op): Promise<void> {
  const p = op.params(m);
  const expected = op.apply(m, p);
  const observed = await op.exec(r, p);
  deepStrictEqual(observed, expected, `outcome of ${op} differs from the model`);
  await assertAgrees(m, r, op.toString());
}

/**
 * The worker holding the slot's open lease loses it to time and gets it back: the lease expires,
 * recovery decides, and the same worker claims the step again (if recovery made it ready). It now
 * holds a newer lease on the step while still having its previous handle: the setting in which a
 * write checked only by owner and "lease still open" would wrongly pass. With `stale`, the worker
 * then does the next thing its previous view calls for, on that stale handle. `inHand`: only
 * while the worker holds an answer it has not recorded (the moment a lost lease matters most).
 * Each operation is compared on its own, as if it were a command.
 */
class Reclaim implements fc.AsyncCommand<Model, Real> {
  constructor(private readonly slot: number, private readonly stale: Fault | null, private readonly inHand: boolean) {}
  check(m: Readonly<Model>): boolean {
    const lease = m.steps[this.slot]?.lease;
    if (!lease || lease.ended !== null || m.workers[lease.holder]!.paused) return false;
    const view = m.view(lease.holder, this.slot);
    return !this.inHand || (!!view && view.answer !== null && !view.recorded);
  }
  async run(m: Model, r: Real): Promise<void> {
    r.stats.commands += 1;
    r.dirty = true;
    const holder = m.step(this.slot).lease!.holder;
    for (const op of [new Expire(this.slot), new Scan(), new Claim(holder, this.slot)]) if (op.check(m)) await runOp(m, r, op);
    const stale = this.stale === null ? null : nextFor(m, holder, this.slot, this.stale, 1);
    if (stale) await runOp(m, r, stale);
  }
  toString = () =>
    `reclaim(s${this.slot}${this.inHand ? ", answer in hand" : ""}): expire, scan, the same worker claims again` +
    (this.stale === null ? "" : `, then acts on its stale view (${this.stale})`);
}

/**
 * Two operations at once. The engine may serialise them either way; the result must be what
 * the model gives for one of the two orders, and the model then follows that order.
 */
class Race implements fc.AsyncCommand<Model, Real> {
  private ops: [Op, Op] | null = null;
  constructor(private readonly a: OpSpec, private readonly b: OpSpec) {}
  check(m: Readonly<Model>): boolean {
    const a = resolve(this.a, m as Model);
    const b = resolve(this.b, m as Model);
    this.ops = a && b && a.actor !== b.actor ? [a, b] : null;
    return this.ops !== null;
  }
  async run(m: Model, r: Real): Promise<void> {
    this.check(m);
    const [a, b] = this.ops!;
    r.stats.commands += 1;
    r.dirty = true;
    const pa = a.params(m);
    const pb = b.params(m);
    const orders: { model: Model; outcomes: [Outcome, Outcome]; order: string }[] = [];
    {
      const model = m.clone();
      const oa = a.apply(model, pa);
      const ob = b.apply(model, pb);
      orders.push({ model, outcomes: [oa, ob], order: `${a} then ${b}` });
    }
    {
      const model = m.clone();
      const ob = b.apply(model, pb);
      const oa = a.apply(model, pa);
      orders.push({ model, outcomes: [oa, ob], order: `${b} then ${a}` });
    }
    // A scan may also have skipped the lease the other operation held locked at that moment.
    for (const [i, scan, other, po] of [[0, a, b, pb], [1, b, a, pa]] as const) {
      const slot = (other as { slot?: unknown }).slot;
      if (!(scan instanceof Scan || scan instanceof TwoScans) || typeof slot !== "number") continue;
      const model = m.clone();
      const oo = other.apply(model, po);
      const os = scanSkipping(model, slot);
      orders.push({ model, outcomes: i === 0 ? [os, oo] : [oo, os], order: `${other}, while ${scan} skipped s${slot}` });
    }
    const [ra, rb] = await r.concurrently(() => a.exec(r, pa), () => b.exec(r, pb));
    if (ra.status === "rejected") throw ra.reason;
    if (rb.status === "rejected") throw rb.reason;
    const observed = [ra.value, rb.value];
    const snapshot = await readSnapshot(r);
    const match = orders.find((o) => o.outcomes.every((expected, i) => outcomeMatches(expected, observed[i])) && isDeepEqual(project(o.model), snapshot));
    if (!match) {
      throw new Error(
        `${this}: no serial order explains the result.\nobserved outcomes ${JSON.stringify(observed)}\n` +
          orders.map((o) => `${o.order}: outcomes ${JSON.stringify(o.outcomes)}`).join("\n") +
          `\nengine: ${JSON.stringify(snapshot)}\n` + orders.map((o) => `${o.order}: ${JSON.stringify(project(o.model))}`).join("\n"),
      );
    }
    m.replaceWith(match.model);
    await assertAgrees(m, r, this.toString(), snapshot);
  }
  toString = () => `race(${specName(this.a)}, ${specName(this.b)})`;
}

/**
 * Under a race, a refused renewal may be explained as `changed_while_renewing`: the engine's
 * fallback when what ended its authority is not visible to the statement. It is still a refusal.
 */
function outcomeMatches(expected: Outcome, observed: Outcome): boolean {
  const contended = (o: Outcome) => typeof o === "object" && o !== null && (o as { reason?: unknown }).reason === "changed_while_renewing";
  if (contended(observed)) return typeof expected === "object" && expected !== null && (expected as { renewed?: unknown }).renewed === false;
  return isDeepEqual(expected, observed);
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

const slot = fc.nat(SLOTS - 1);
const worker = fc.nat(WORKERS - 1);
const fault = fc.constantFrom<Fault>("ok", "ok", "ok", "fail", "drop");
const fixed = (op: Op): OpSpec => ({ fixed: op });

const workerNext = fc.record({ worker, slot, fault, age: fc.constantFrom(0, 0, 0, 1) }).map((next): OpSpec => ({ next }));
const holderNext = fc.record({ slot, fault }).map((next): OpSpec => ({ holderNext: next }));
const claim = fc.tuple(worker, slot).map(([w, s]) => fixed(new Claim(w, s)));
const renew = fc.tuple(worker, slot).map(([w, s]) => fixed(new Renew(w, s)));
const expire = slot.map((s) => fixed(new Expire(s)));
const scan = fc.constant(null).map(() => fixed(new Scan()));
const cancel = slot.map((s) => fixed(new Cancel(s)));
const revoke = slot.map((s) => fixed(new Revoke(s)));
const resolution = fc.constantFrom(...REVIEW_RESOLUTIONS);
const ref = fc.constantFrom<"found" | "other">("found", "found", "other");
const resolveBy = (person: number, stale: fc.Arbitrary<boolean>) =>
  fc.tuple(slot, resolution, stale, ref).map(([s, res, st, rf]) => fixed(new Resolve(s, res, st, rf, person)));
/** The holder of the slot's lease acts on the handle of the lease it held before (after a re-claim). */
const holderStale = fc.record({ slot, fault }).map(({ slot, fault }): OpSpec => ({ holderNext: { slot, fault, age: 1 } }));

/** What a racing worker does, and what it races against. */
const racer = fc.oneof(holderNext, workerNext, claim, renew, resolveBy(0, fc.constant(false)));
const rival = fc.oneof(expire, scan, cancel, revoke, claim, workerNext, resolveBy(1, fc.constant(false)));

const single = (spec: fc.Arbitrary<OpSpec>) => spec.map((s): fc.AsyncCommand<Model, Real> => new Single(s));

export const commandArbitrary = fc.oneof(
  // A create runs only while its slot is empty, so it is skipped (at no cost) once both exist; a
  // high weight just gets the sequence started early, leaving more of it for the step's life.
  { weight: 8, arbitrary: fc.tuple(slot, fc.constantFrom(...KINDS), fc.integer({ min: 1, max: 4 })).map(([s, k, b]) => new Single(fixed(new Create(s, k, b)))) },
  { weight: 5, arbitrary: single(claim) },
  { weight: 1, arbitrary: single(renew) },
  { weight: 6, arbitrary: single(workerNext) },
  { weight: 16, arbitrary: single(holderNext) },
  { weight: 3, arbitrary: single(expire) },
  { weight: 2, arbitrary: single(scan) },
  { weight: 1, arbitrary: fc.constant(null).map(() => new Single(fixed(new TwoScans()))) },
  { weight: 1, arbitrary: single(cancel) },
  { weight: 1, arbitrary: single(revoke) },
  { weight: 1, arbitrary: fc.tuple(worker, fc.boolean()).map(([w, p]) => new Single(fixed(new Pause(w, p)))) },
  { weight: 2, arbitrary: fc.tuple(slot, fc.option(fault)).map(([s, f]): fc.AsyncCommand<Model, Real> => new Reclaim(s, f, false)) },
  // Runs only while the holder has an unrecorded answer in hand (skipped at no cost otherwise), so
  // it needs a weight that competes with holderNext at exactly that moment.
  { weight: 24, arbitrary: fc.tuple(slot, fc.option(fault)).map(([s, f]): fc.AsyncCommand<Model, Real> => new Reclaim(s, f, true)) },
  { weight: 1, arbitrary: single(holderStale) },
  { weight: 2, arbitrary: single(resolveBy(0, fc.constant(false))) },
  { weight: 1, arbitrary: single(resolveBy(0, fc.constant(true))) },
  { weight: 3, arbitrary: fc.tuple(racer, rival).map(([a, b]): fc.AsyncCommand<Model, Real> => new Race(a, b)) },
);

export type RunStats = { sequences: number; commands: number; resetMs?: number };

/**
 * The property: a scheduler for the races and up to `maxCommands` commands. `stats` counts
 * what ran (commands whose precondition failed are skipped by fast-check and not counted).
 * A failure replays exactly from its seed, path and the commands' replayPath (all three printed).
 */
export function engineProperty(pool: Pool, stats: RunStats, maxCommands = 50, replayPath?: string) {
  const real = new Real(pool);
  let prepared = false;
  return fc.asyncProperty(fc.scheduler(), fc.commands([commandArbitrary], { maxCommands, size: "max", replayPath }), async (s, cmds) => {
    if (!prepared) {
      await prepareDatabase(pool);
      prepared = true;
    }
    const resetAt = performance.now();
    await real.reset();
    stats.resetMs = (stats.resetMs ?? 0) + performance.now() - resetAt;
    real.scheduler = s;
    stats.sequences += 1;
    real.stats = stats;
    await fc.asyncModelRun(() => ({ model: new Model(), real }), cmds);
  });
}
