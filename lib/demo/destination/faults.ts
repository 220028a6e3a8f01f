/**
 * Faults the destination injects, switchable at run time. A profile can be set for all kinds
 * (`global`) and per kind; a kind's own fields override the global ones field by field. Every
 * random draw comes from one seeded generator, so a run that sends the same requests in the same
 * order meets the same faults.
 */
import { z } from "zod";
import { faultProfileSchema, type FaultProfile } from "@/lib/lab/fault-settings";
import { DESTINATION_KINDS, type DestinationKind } from "./sql";


export const faultSettingsSchema = z.strictObject({
  seed: z.number().int().min(0).max(0xffff_ffff).default(1),
  global: faultProfileSchema.default({}),
  kinds: z.partialRecord(z.enum(DESTINATION_KINDS), faultProfileSchema).default({}),
  /**
   * Kinds whose first request with a given body loses its answer after its effect commits; a
   * repeat of that body is answered. Unlike `dropResponseRate` it draws nothing, so every caller
   * meets it at the same point: its first call, however soon it retries. Omitted unless set (the
   * fault lab's protocol does not know it).
   */
  dropFirstResponse: z.array(z.enum(DESTINATION_KINDS)).max(DESTINATION_KINDS.length).optional(),
});
export type FaultSettings = z.infer<typeof faultSettingsSchema>;

export const noFaults: FaultSettings = faultSettingsSchema.parse({});

/** What happens to one request, drawn before it is handled. */
export type FaultPlan = {
  delayMs: number;
  refuse: { status: 429; retryAfterMs: number } | { status: 500 } | null;
  after: { drop: true } | { lateMs: number } | null;
};

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export class FaultInjector {
  private random: () => number;
  /** Kind and body digest of every request whose answer `dropFirstResponse` dropped already (this process's memory). */
  private firstAnswersDropped = new Set<string>();

  constructor(private current: FaultSettings) {
    this.random = seededRandom(current.seed);
  }

  get settings(): FaultSettings {
    return this.current;
  }

  /** Replaces the settings and restarts the generator from their seed. */
  replace(settings: FaultSettings): void {
    this.current = settings;
    this.random = seededRandom(settings.seed);
    this.firstAnswersDropped.clear();
  }

  /** Asked once the effect of a request with body `payloadDigest` committed: true for the first such at a `dropFirstResponse` kind. */
  dropsFirstAnswer(kind: DestinationKind, payloadDigest: string): boolean {
    if (!this.current.dropFirstResponse?.includes(kind)) return false;
    const key = `${kind} ${payloadDigest}`;
    if (this.firstAnswersDropped.has(key)) return false;
    this.firstAnswersDropped.add(key);
    return true;
  }

  /** Draws the same number of values whatever the outcome, so one request's faults never shift the next one's. */
  plan(kind: DestinationKind): FaultPlan {
    const profile: FaultProfile = { ...this.current.global, ...this.current.kinds[kind] };
    const [jitter, limited, failed, dropped, late] = [this.random(), this.random(), this.random(), this.random(), this.random()];
    const delayMs = profile.latency ? profile.latency.fixedMs + Math.floor(jitter * profile.latency.jitterMs) : 0;
    const refuse =
      profile.rateLimit && limited < profile.rateLimit.rate
        ? { status: 429 as const, retryAfterMs: profile.rateLimit.retryAfterMs }
        : profile.errorRate !== undefined && failed < profile.errorRate
          ? { status: 500 as const }
          : null;
    const after =
      profile.dropResponseRate !== undefined && dropped < profile.dropResponseRate
        ? { drop: true as const }
        : profile.lateResponse && late < profile.lateResponse.rate
          ? { lateMs: profile.lateResponse.delayMs }
          : null;
    return { delayMs, refuse, after };
  }
}
