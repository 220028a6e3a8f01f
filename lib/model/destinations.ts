/**
 * In-process stand-ins for the four external systems, each with its contract's semantics and an
 * audit of every effect it applied. They sit at a process boundary (the engine never sees them),
 * so faking them is fair; the engine and PostgreSQL under test are real.
 *
 *  - fenced: per resource, rejects a term older than the newest (epoch, term) it has seen, and
 *    binds a request identity to its first effect, replaying it afterwards;
 *  - idempotent: same key, same result;
 *  - queryable: applies every create, answers status by client reference;
 *  - opaque: applies every create.
 */
import type { Kind } from "./model";

export type Effect = { readonly resource: string; readonly identity: string; readonly ref: string };
export type CallAnswer =
  | { kind: "effect"; ref: string; replayed: boolean }
  | { kind: "absent" }
  | { kind: "unknown" };

export class FakeDestinations {
  readonly audit: Record<Kind, Effect[]> = { fenced: [], idempotent: [], queryable: [], opaque: [] };
  private readonly fences = new Map<string, [bigint, bigint]>();
  private readonly firstEffect = new Map<string, string>();

  create(kind: Kind, call: { resource: string; identity: string; epoch: bigint; term: bigint; fault: "ok" | "fail" | "drop" }): CallAnswer {
    if (call.fault === "fail") return { kind: "absent" };
    if (kind === "fenced") {
      const newest = this.fences.get(call.resource);
      if (newest && (call.epoch < newest[0] || (call.epoch === newest[0] && call.term < newest[1]))) return { kind: "absent" };
      this.fences.set(call.resource, [call.epoch, call.term]);
    }
    const key = `${kind}/${kind === "fenced" ? call.resource + "/" : ""}${call.identity}`;
    const earlier = kind === "fenced" || kind === "idempotent" ? this.firstEffect.get(key) : undefined;
    let answer: CallAnswer;
    if (earlier !== undefined) {
      answer = { kind: "effect", ref: earlier, replayed: true };
    } else {
      const ref = `${call.resource}#${this.audit[kind].filter((e) => e.resource === call.resource).length + 1}`;
      this.audit[kind].push({ resource: call.resource, identity: call.identity, ref });
      if (!this.firstEffect.has(key)) this.firstEffect.set(key, ref);
      answer = { kind: "effect", ref, replayed: false };
    }
    return call.fault === "drop" ? { kind: "unknown" } : answer;
  }

  /** The queryable destination's status query: the first effect for this client reference. */
  status(identity: string): { status: "applied"; ref: string } | { status: "not_found" } {
    const found = this.audit.queryable.find((e) => e.identity === identity);
    return found ? { status: "applied", ref: found.ref } : { status: "not_found" };
  }

  effectsOn(resource: string): Effect[] {
    return Object.values(this.audit).flatMap((effects) => effects.filter((e) => e.resource === resource));
  }
}
