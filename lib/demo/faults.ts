/**
 * The fault mixes demo traffic switches on at the synthetic destination (FENCELINE_DEMO_FAULTS).
 * `mild` shows every recovery path now and then without burying the happy path; `chaos` makes
 * unknown outcomes common, so the review queue fills with opaque deliveries.
 */
import { faultSettingsSchema, type FaultSettings } from "@/lib/demo/destination/faults";

export const FAULT_MIXES = ["none", "mild", "chaos"] as const;
export type FaultMix = (typeof FAULT_MIXES)[number];

const SEED = 1;

export const faultMixSettings: Record<FaultMix, FaultSettings> = {
  none: faultSettingsSchema.parse({ seed: SEED }),
  mild: faultSettingsSchema.parse({
    seed: SEED,
    global: {
      latency: { fixedMs: 20, jitterMs: 80 },
      rateLimit: { rate: 0.05, retryAfterMs: 2_000 },
      errorRate: 0.02,
      dropResponseRate: 0.01,
    },
  }),
  chaos: faultSettingsSchema.parse({
    seed: SEED,
    global: {
      latency: { fixedMs: 50, jitterMs: 450 },
      rateLimit: { rate: 0.15, retryAfterMs: 3_000 },
      errorRate: 0.1,
      dropResponseRate: 0.05,
      // Longer than the adapters' 5 s timeout: the effect commits, the caller gives up first.
      lateResponse: { rate: 0.05, delayMs: 7_000 },
    },
  }),
};

export function parseFaultMix(text: string | undefined): FaultMix {
  if (text === undefined || text === "") return "mild";
  const mix = FAULT_MIXES.find((candidate) => candidate === text);
  if (!mix) throw new Error(`FENCELINE_DEMO_FAULTS must be one of ${FAULT_MIXES.join(", ")}, got "${text}"`);
  return mix;
}

/** Installs the mix at the destination service (PUT /admin/faults). */
export async function applyFaultMix(destinationUrl: string, mix: FaultMix): Promise<void> {
  const response = await fetch(`${destinationUrl}/admin/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(faultMixSettings[mix]),
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) throw new Error(`PUT ${destinationUrl}/admin/faults answered ${response.status}: ${await response.text()}`);
}
