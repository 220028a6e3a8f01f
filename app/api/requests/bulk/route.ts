/** POST /api/requests/bulk — start a cancel or rerun of exactly the previewed matches; it runs in the background (202). */
import { bulkProgressSchema, bulkStartBody } from "@/lib/api/contract/engineer/bulk";
import { handle, json, readJson } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { readBulkProgress, resumeBulkAction, startBulk } from "@/lib/requests/bulk/bulk";

export const dynamic = "force-dynamic";

export const POST = handle(async (request) => {
  const staff = await authorize(request, "requests:operate");
  const body = await readJson(request, bulkStartBody);
  const { id } = await startBulk(pool(), { ...body, actor: actorName(staff) });
  // Background work: the answer does not wait for it; a runner that dies is resumed by the next progress read.
  void resumeBulkAction(pool(), id).catch((error: unknown) => console.error(`[bulk] action ${id} stopped:`, error));
  return json(bulkProgressSchema, await readBulkProgress(pool(), id), { status: 202, headers: { location: `/api/requests/bulk/${id}` } });
});
