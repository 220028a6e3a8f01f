import { PermissionDeniedError } from "./errors";

/**
 * Refuses a state-changing request sent from another site (CSRF). Browsers send Sec-Fetch-Site
 * (and Origin) on every cross-site POST/PUT/DELETE; a request without them (curl, tests, a
 * worker) is not a browser's, and carries no ambient cookie to abuse. The session cookie is also
 * SameSite=Lax; this check does not rely on it.
 */
export function refuseCrossSite(request: Request): void {
  const site = request.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") {
    throw new PermissionDeniedError(`cross-site request refused (Sec-Fetch-Site: ${site})`);
  }
  const origin = request.headers.get("origin");
  if (origin && origin !== "null") {
    const expected = new URL(request.url).host;
    const forwarded = request.headers.get("host");
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      throw new PermissionDeniedError("cross-site request refused (malformed Origin)");
    }
    if (host !== expected && host !== forwarded) throw new PermissionDeniedError(`cross-site request refused (Origin: ${origin})`);
  }
}
