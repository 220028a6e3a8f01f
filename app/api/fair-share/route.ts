/** GET /api/fair-share — concurrency keys and destination rates as they stand now (engineers). */
import { fairShareViewSchema } from "@/lib/api/contract/engineer/fair-share";
import { handle, json } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { readFairShare } from "@/lib/fair-share/view";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "technical:read");
  return json(fairShareViewSchema, await readFairShare(readPool()));
});
