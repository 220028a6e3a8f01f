/** The fault lab exists only in demo mode (`npm start`); elsewhere its routes answer 404. */
import { HttpProblem } from "@/lib/api/http";
import { demoMode } from "@/lib/demo/mode";

export function requireDemo(): { destinationUrl: string } {
  const demo = demoMode();
  if (!demo) throw new HttpProblem(404, "Not found", "the fault lab exists only in demo mode (npm start)");
  return demo;
}

/**
 * Refuses a state-changing request sent from another site. Browsers send Sec-Fetch-Site (and
 * Origin) on every cross-site POST/PUT; a request without them (curl, tests) is not a browser's.
 */
export function refuseCrossSite(request: Request): void {
  const site = request.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") {
    throw new HttpProblem(403, "Forbidden", `cross-site request refused (Sec-Fetch-Site: ${site})`);
  }
  const origin = request.headers.get("origin");
  if (origin && origin !== "null") {
    const expected = new URL(request.url).host;
    const forwarded = request.headers.get("host");
    const host = new URL(origin).host;
    if (host !== expected && host !== forwarded) throw new HttpProblem(403, "Forbidden", `cross-site request refused (Origin: ${origin})`);
  }
}
