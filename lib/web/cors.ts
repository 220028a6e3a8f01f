/**
 * Cross-origin reads of the tracking view, for the origins an admin lists in
 * FENCELINE_TRACK_ORIGINS (comma-separated, e.g. `https://shop.example,http://127.0.0.1:5173`).
 * An adopter's own page polls `/api/track/<token>` from its origin; the token is the only key,
 * so no credentials are ever allowed, and an origin not listed gets no CORS header at all (its
 * browser then refuses to hand the answer to the page).
 */

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = 600;

let parsed: { from: string; origins: ReadonlySet<string> } | undefined;

/**
 * The listed origins. Each entry must be an origin exactly (scheme, host, optional port, no path):
 * a malformed entry throws naming it, rather than silently allowing less or more than meant.
 */
export function trackOrigins(setting = process.env.FENCELINE_TRACK_ORIGINS ?? ""): ReadonlySet<string> {
  if (parsed?.from === setting) return parsed.origins;
  const origins = new Set<string>();
  for (const entry of setting.split(",").map((each) => each.trim()).filter(Boolean)) {
    const origin = URL.canParse(entry) ? new URL(entry).origin : "null";
    if (origin === "null" || origin !== entry.replace(/\/$/, "")) {
      throw new Error(`FENCELINE_TRACK_ORIGINS: ${JSON.stringify(entry)} is not an origin (scheme://host[:port], no path)`);
    }
    origins.add(origin);
  }
  parsed = { from: setting, origins };
  return origins;
}

/** The CORS headers of a tracking read for the request's Origin: an allowed origin gets itself back. */
export function trackCorsHeaders(origin: string | null, allowed: ReadonlySet<string>): Record<string, string> {
  // Vary even when refused: a shared cache must not hand one origin's answer to another.
  const vary = { vary: "Origin" };
  if (origin === null || !allowed.has(origin)) return vary;
  return { ...vary, "access-control-allow-origin": origin, "access-control-expose-headers": "ETag" };
}

/** The answer to a preflight: GET only, with If-None-Match, and no credentials. */
export function trackPreflightHeaders(origin: string | null, allowed: ReadonlySet<string>): Record<string, string> {
  const headers = trackCorsHeaders(origin, allowed);
  if (!("access-control-allow-origin" in headers)) return headers;
  return { ...headers, "access-control-allow-methods": "GET", "access-control-allow-headers": "If-None-Match", "access-control-max-age": String(PREFLIGHT_MAX_AGE_S) };
}
