/** The demo fault lab: the synthetic destination's faults, and signals to worker processes. */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { labFaultSettingsSchema } from "@/lib/lab/fault-settings";
import { LAB_ACTIONS } from "@/lib/steps/vocabulary";
import { operation, uuid } from "../common";

export type LabAction = (typeof LAB_ACTIONS)[number];
export const labWorkerParams = z.object({ sessionId: uuid, action: z.enum(LAB_ACTIONS) });

export const labSignalResultSchema = z
  .object({ sessionId: uuid, pid: z.number().int(), action: z.enum(LAB_ACTIONS), signal: z.string() })
  .meta({ id: "LabSignalResult" });

export const labFaultsSchema = z
  .object({ destinationUrl: z.string(), destinations: z.array(z.string()), settings: labFaultSettingsSchema })
  .meta({ id: "LabFaults", description: "The synthetic destination's fault settings" });
export type LabFaults = z.output<typeof labFaultsSchema>;

const notDemo = "Not in demo mode: the fault lab does not exist";
const unreachable = "The destination did not answer";

export const labPaths: ZodOpenApiPathsObject = {
  "/api/lab/faults": {
    get: operation({
      id: "getLabFaults",
      summary: "The synthetic destination's faults (demo mode only)",
      tag: "lab",
      ok: { description: "Current settings", schema: labFaultsSchema },
      problems: { "404": notDemo, "502": unreachable },
    }),
    put: operation({
      id: "putLabFaults",
      summary: "Replace the synthetic destination's faults (demo mode only)",
      tag: "lab",
      body: labFaultSettingsSchema,
      ok: { description: "The settings now in force", schema: labFaultsSchema },
      problems: { "400": "Invalid settings", "403": "Cross-site request refused", "404": notDemo, "502": unreachable },
    }),
  },
  "/api/lab/workers/{sessionId}/{action}": {
    post: operation({
      id: "signalWorker",
      summary: "Pause (SIGSTOP), resume (SIGCONT) or kill (SIGKILL) a worker process (demo mode only)",
      description: "Only a live session (not stopped) whose host is this machine and whose process is a Fenceline worker.",
      tag: "lab",
      path: labWorkerParams,
      ok: { description: "Signal sent", schema: labSignalResultSchema },
      problems: {
        "403": "Cross-site request refused",
        "404": "Not in demo mode, or no such session",
        "409": "The session is stopped, on another host, or its process is not a worker",
      },
    }),
  },
};
