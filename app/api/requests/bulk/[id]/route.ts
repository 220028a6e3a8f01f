/** GET /api/requests/bulk/{id} — a bulk action's progress; carries on one whose runner stopped. */
import { bulkParams, bulkProgressSchema } from "@/lib/api/contract/engineer/bulk";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { pool } from "@/lib/db/pool";
import { readBulkProgress, resumeBulkAction } from "@/lib/requests/bulk/bulk";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  await authorize(request, "technical:read");
  const { id } = await readParams(params, bulkParams);
  const progress = await readBulkProgress(pool(), id);
  if (progress.state === "running" && !progress.runnerAlive) {
    void resumeBulkAction(pool(), id).catch((error: unknown) => console.error(`[bulk] action ${id} stopped:`, error));
  }
  return json(bulkProgressSchema, progress);
});
