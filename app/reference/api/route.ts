/** GET /reference/api — the HTTP API rendered from /api/openapi.json (lib/web/api-reference.ts). */
import { apiReferencePage } from "@/lib/web/api-reference";
import { NONCE_HEADER } from "@/lib/web/security-headers";

export const dynamic = "force-dynamic";

export function GET(request: Request): Response {
  return apiReferencePage(request.headers.get(NONCE_HEADER));
}
