/** POST /api/lab/workers/{sessionId}/{pause|resume|kill} — signal a worker process on this machine (demo mode only). */
import { labSignalResultSchema, labWorkerParams } from "@/lib/api/contract/engineer/lab";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { pool } from "@/lib/db/pool";
import { requireDemo } from "@/lib/lab/demo";
import { signalWorker } from "@/lib/lab/signal";

export const dynamic = "force-dynamic";

export const POST = handle<{ sessionId: string; action: string }>(async (request, { params }) => {
  requireDemo();
  await authorize(request, "lab:operate");
  const { sessionId, action } = await readParams(params, labWorkerParams);
  return json(labSignalResultSchema, await signalWorker(pool(), sessionId, action));
});
