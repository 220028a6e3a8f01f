/** POST /api/admin/scrape-tokens/{id}/revoke — revoke a scrape token (admins; audited). */
import { scrapeTokenParams, scrapeTokenSchema } from "@/lib/api/contract/staff";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { revokeScrapeToken } from "@/lib/auth/scrape-tokens";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const admin = await authorize(request, "scrape-tokens:manage");
  const { id } = await readParams(params, scrapeTokenParams);
  return json(scrapeTokenSchema, await revokeScrapeToken(pool(), id, actorName(admin)));
});
