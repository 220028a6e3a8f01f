/**
 * The HTTP API's reference page: Swagger UI (swagger-ui-dist, served from this app, never a CDN)
 * rendering the app's own OpenAPI document, /api/openapi.json. No sign-in: the document describes
 * the API, it holds no data. The page's scripts carry the request's CSP nonce (proxy.ts).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";

/** The Swagger UI files the page loads, by the name it asks for them under /reference/api/. */
export const API_REFERENCE_ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};

export async function apiReferenceAsset(name: string): Promise<Response> {
  const type = API_REFERENCE_ASSETS[name];
  if (!type) return new Response("not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  const file = path.join(process.cwd(), "node_modules", "swagger-ui-dist", name);
  return new Response(await readFile(file), { headers: { "content-type": type, "cache-control": "public, max-age=3600" } });
}

export function apiReferencePage(nonce: string | null): Response {
  const attribute = nonce ? ` nonce="${nonce}"` : "";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fenceline HTTP API</title>
<link rel="stylesheet" href="/reference/api/swagger-ui.css"${attribute}>
</head>
<body>
<main id="api" aria-label="Fenceline HTTP API"></main>
<script src="/reference/api/swagger-ui-bundle.js"${attribute}></script>
<script${attribute}>
SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#api", deepLinking: true, tryItOutEnabled: false });
</script>
</body>
</html>
`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}
