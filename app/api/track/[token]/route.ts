/** GET /api/track/{token} — the end user's view of their request. */
import { trackingNotFound, trackingViewSchema } from "@/lib/api/contract/public";
import { handle, json } from "@/lib/api/http";
import { pool } from "@/lib/db/pool";
import { trackingViewByToken } from "@/lib/projection/read";

export const dynamic = "force-dynamic";

export const GET = handle<{ token: string }>(async (_request, { params }) => {
  const { token } = await params;
  const view = await trackingViewByToken(pool(), token);
  if (!view) throw trackingNotFound();
  return json(trackingViewSchema, view, { headers: { "x-robots-tag": "noindex" } });
});
