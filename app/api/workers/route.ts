/** GET /api/workers — worker sessions, heartbeats and the leases they hold now. */
import { workersSchema } from "@/lib/api/contract/engineer";
import { handle, json } from "@/lib/api/http";
import { pool } from "@/lib/db/pool";
import { demoMode } from "@/lib/demo/mode";
import { listWorkers } from "@/lib/workers/list";

export const dynamic = "force-dynamic";

export const GET = handle(async () => json(workersSchema, await listWorkers(pool(), { lab: demoMode() !== null })));
