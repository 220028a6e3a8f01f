/** GET/POST /api/admin/scrape-tokens — Prometheus scrape tokens (admins); a new token is shown once. */
import { createdScrapeTokenSchema, createScrapeTokenBody, scrapeTokenListSchema } from "@/lib/api/contract/staff";
import { handle, json, readJson } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { createScrapeToken, listScrapeTokens } from "@/lib/auth/scrape-tokens";
import { actorName } from "@/lib/auth/staff";
import { pool, prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "scrape-tokens:manage");
  return json(scrapeTokenListSchema, { items: await listScrapeTokens(prisma()) });
});

export const POST = handle(async (request) => {
  const admin = await authorize(request, "scrape-tokens:manage");
  const { name } = await readJson(request, createScrapeTokenBody);
  return json(createdScrapeTokenSchema, await createScrapeToken(pool(), name, actorName(admin)), { status: 201 });
});
