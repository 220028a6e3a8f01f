/**
 * Who may read the Prometheus exposition: a scraper presenting its scrape token in
 * `Authorization: Bearer`, or a staff member whose roles grant technical:read. A request that
 * presents a bearer credential is judged by it alone (a missing, unknown or revoked token is 401,
 * whatever cookie comes with it), so a scraper's misconfiguration is never masked by a session.
 */
import { pool } from "@/lib/db/pool";
import { authorize } from "./authorize";
import { ScrapeTokenRequiredError } from "./errors";
import { identifyScraper, type ScraperIdentity } from "./scrape-tokens";
import type { Staff } from "./staff";

const BEARER = /^Bearer\s+(\S{1,512})\s*$/i;

export async function authorizeScrape(request: Request): Promise<{ scraper: ScraperIdentity } | { staff: Staff }> {
  if (!request.headers.has("authorization")) return { staff: await authorize(request, "technical:read") };
  const match = BEARER.exec(request.headers.get("authorization") ?? "");
  const scraper = match ? await identifyScraper(pool(), match[1]!) : null;
  if (!scraper) throw new ScrapeTokenRequiredError();
  return { scraper };
}
