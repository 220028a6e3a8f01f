/**
 * GET /api/track/{token} — the end user's view of their request, polled by /track and, across
 * origins an admin allows (FENCELINE_TRACK_ORIGINS), by the adopter's own pages. Each answer
 * carries an ETag, and an unchanged view is a bodiless 304.
 */
import { conditionalJson } from "@/lib/api/conditional";
import { trackingNotFound, trackingViewSchema } from "@/lib/api/contract/public";
import { handle } from "@/lib/api/http";
import { pool } from "@/lib/db/pool";
import { trackingViewByToken } from "@/lib/projection/read";
import { trackCorsHeaders, trackOrigins, trackPreflightHeaders } from "@/lib/web/cors";

export const dynamic = "force-dynamic";

// Keep, but ask every time while it may change; once nothing will, a while without asking.
const WHILE_CHANGING = "private, no-cache";
const ONCE_ENDED = "private, max-age=300";

const read = handle<{ token: string }>(async (request, { params }) => {
  const { token } = await params;
  const view = await trackingViewByToken(pool(), token);
  if (!view) throw trackingNotFound();
  return conditionalJson(request, trackingViewSchema, view, { cacheControl: view.terminal ? ONCE_ENDED : WHILE_CHANGING, headers: { "x-robots-tag": "noindex" } });
});

export const GET = handle<{ token: string }>(async (request, context) => {
  const cors = trackCorsHeaders(request.headers.get("origin"), trackOrigins());
  const response = await read(request, context);
  // Refusals too: a page must be able to read its 404.
  for (const [name, value] of Object.entries(cors)) response.headers.set(name, value);
  return response;
});

export const OPTIONS = handle<{ token: string }>(async (request) => new Response(null, { status: 204, headers: trackPreflightHeaders(request.headers.get("origin"), trackOrigins()) }));
