/** GET/POST /api/admin/worker-tokens — worker tokens (admins); a new token is shown once. */
import { createdWorkerTokenSchema, createWorkerTokenBody, workerTokenListSchema } from "@/lib/api/contract/staff";
import { handle, json, readJson } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { createWorkerToken, listWorkerTokens } from "@/lib/auth/worker-tokens";
import { pool, prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "worker-tokens:manage");
  return json(workerTokenListSchema, { items: await listWorkerTokens(prisma()) });
});

export const POST = handle(async (request) => {
  const admin = await authorize(request, "worker-tokens:manage");
  const { workerName } = await readJson(request, createWorkerTokenBody);
  return json(createdWorkerTokenSchema, await createWorkerToken(pool(), workerName, actorName(admin)), { status: 201 });
});
