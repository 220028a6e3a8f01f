/** The fault lab's proxy to the synthetic destination's fault protocol (lib/lab/fault-settings.ts), validated both ways. */
import { z } from "zod";
import type { LabFaults } from "@/lib/api/contract/engineer/lab";
import { LabDestinationError } from "./errors";
import { labFaultSettingsSchema, type LabFaultSettings } from "./fault-settings";

const DESTINATION_TIMEOUT_MS = 5_000;
const destinationsSchema = z.object({ destinations: z.array(z.string().min(1).max(100)).max(100) });

async function call<S extends z.ZodType>(destinationUrl: string, path: string, init: RequestInit, schema: S): Promise<z.output<S>> {
  let response: Response;
  try {
    response = await fetch(new URL(path, destinationUrl), { ...init, signal: AbortSignal.timeout(DESTINATION_TIMEOUT_MS) });
  } catch (error) {
    throw new LabDestinationError("unreachable", `the synthetic destination at ${destinationUrl} did not answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  if (!response.ok) {
    throw new LabDestinationError("refused", `the destination answered ${response.status}: ${text.slice(0, 300)}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new LabDestinationError("invalid_answer", `the destination's answer to ${path} is not JSON`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new LabDestinationError("invalid_answer", `the destination's answer to ${path} does not match the fault protocol`);
  return parsed.data;
}

async function withDestinations(destinationUrl: string, settings: LabFaultSettings): Promise<LabFaults> {
  const { destinations } = await call(destinationUrl, "/admin/destinations", { method: "GET" }, destinationsSchema);
  return { destinationUrl, destinations, settings };
}

export async function readFaults(destinationUrl: string): Promise<LabFaults> {
  return withDestinations(destinationUrl, await call(destinationUrl, "/admin/faults", { method: "GET" }, labFaultSettingsSchema));
}

export async function replaceFaults(destinationUrl: string, settings: LabFaultSettings): Promise<LabFaults> {
  const init = { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(settings) };
  return withDestinations(destinationUrl, await call(destinationUrl, "/admin/faults", init, labFaultSettingsSchema));
}
