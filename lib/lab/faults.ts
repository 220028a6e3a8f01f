/** The fault lab's proxy to the synthetic destination's /admin/faults, validated both ways. */
import type { LabFaults } from "@/lib/api/contract/engineer/lab";
import { faultSettingsSchema, type FaultSettings } from "@/lib/demo/destination/faults";
import { LabDestinationError } from "./errors";

const DESTINATION_TIMEOUT_MS = 5_000;

async function call(destinationUrl: string, init: RequestInit): Promise<FaultSettings> {
  let response: Response;
  try {
    response = await fetch(new URL("/admin/faults", destinationUrl), { ...init, signal: AbortSignal.timeout(DESTINATION_TIMEOUT_MS) });
  } catch (error) {
    throw new LabDestinationError("unreachable", `the synthetic destination at ${destinationUrl} did not answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  if (!response.ok) {
    throw new LabDestinationError("refused", `the destination answered ${response.status}: ${text.slice(0, 300)}`);
  }
  const parsed = faultSettingsSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new LabDestinationError("invalid_answer", "the destination's fault settings do not match the schema");
  return parsed.data;
}

export async function readFaults(destinationUrl: string): Promise<LabFaults> {
  return { destinationUrl, settings: await call(destinationUrl, { method: "GET" }) };
}

export async function replaceFaults(destinationUrl: string, settings: FaultSettings): Promise<LabFaults> {
  const body = JSON.stringify(settings);
  return { destinationUrl, settings: await call(destinationUrl, { method: "PUT", headers: { "content-type": "application/json" }, body }) };
}
