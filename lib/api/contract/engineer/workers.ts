/** Worker sessions: liveness and the leases each holds now. */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { operation, term, timestamp, uuid } from "../common";

export const workerSessionSchema = z
  .object({
    id: uuid,
    host: z.string(),
    pid: z.number().int(),
    transport: z.string(),
    startedAt: timestamp,
    lastHeartbeatAt: timestamp,
    heartbeatAgeMs: z.number().int(),
    stoppedAt: timestamp.nullable(),
    stopReason: z.string().nullable(),
    /** Same host as this web process: only then can the fault lab signal it. */
    onThisHost: z.boolean(),
    leases: z.array(z.object({ stepId: uuid, stepName: z.string(), fencingTerm: term, expiresAt: timestamp, expired: z.boolean() })),
  })
  .meta({ id: "WorkerSession", description: "Liveness only: never evidence of what an external system did" });
export type WorkerSessionView = z.output<typeof workerSessionSchema>;

export const workersSchema = z
  .object({ dbNow: timestamp, host: z.string(), lab: z.boolean(), sessions: z.array(workerSessionSchema) })
  .meta({ id: "Workers" });
export type Workers = z.output<typeof workersSchema>;

export const workersPaths: ZodOpenApiPathsObject = {
  "/api/workers": {
    get: operation({
      id: "listWorkers",
      summary: "Worker sessions, heartbeats and the leases they hold now",
      tag: "engineer",
      ok: { description: "Sessions, live first", schema: workersSchema },
    }),
  },
};
