/** GET /api/workers — worker sessions, heartbeats and the leases they hold now. */
import { workersSchema } from "@/lib/api/contract/engineer/workers";
import { handle, json } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { demoMode } from "@/lib/lab/demo";
import { listWorkers } from "@/lib/workers/list";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "technical:read");
  return json(workersSchema, await listWorkers(readPool(), { lab: demoMode() !== null }));
});
