/** POST /api/requests/bulk/preview — how many requests a filter matches, and the first of them (writes nothing). */
import { bulkPreviewBody, bulkPreviewSchema } from "@/lib/api/contract/engineer/bulk";
import { handle, json, readJson } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { previewBulk } from "@/lib/requests/bulk/bulk";

export const dynamic = "force-dynamic";

export const POST = handle(async (request) => {
  await authorize(request, "requests:operate");
  const { filter } = await readJson(request, bulkPreviewBody);
  return json(bulkPreviewSchema, await previewBulk(readPool(), filter));
});
