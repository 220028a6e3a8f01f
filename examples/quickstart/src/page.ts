/**
 * `npm run page`: your customer's page, on its own origin (http://127.0.0.1:4400, or PAGE_PORT).
 * It bundles src/page/progress.tsx with esbuild once at start and serves it with a strict
 * Content-Security-Policy: scripts and styles from this origin only, and reads only from
 * Fenceline. Open it as `http://127.0.0.1:4400/?token=<tracking token>`; `npm run request`
 * prints that link. Fenceline must list this origin in FENCELINE_TRACK_ORIGINS.
 */
import { readFile } from "node:fs/promises";
import http from "node:http";
import { build } from "esbuild";
import { required } from "./env.js";

const fencelineUrl = new URL(required("FENCELINE_URL")).origin;
const port = Number(process.env.PAGE_PORT ?? 4400);
const here = new URL("./page/", import.meta.url);

const bundle = await build({
  entryPoints: [new URL("progress.tsx", here).pathname],
  bundle: true,
  format: "esm",
  platform: "browser",
  minify: true,
  write: false,
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});
const script = bundle.outputFiles[0]!.contents;
const stylesheet = await readFile(new URL("page.css", here));

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="fenceline-url" content="${escape(fencelineUrl)}">
<meta name="referrer" content="no-referrer">
<title>Your welcome card</title>
<link rel="stylesheet" href="/page.css">
<script type="module" src="/page.js"></script>
</head>
<body><div id="root"></div></body>
</html>
`;

const policy = ["default-src 'none'", "script-src 'self'", "style-src 'self'", `connect-src ${fencelineUrl}`, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join("; ");
const files: Record<string, { type: string; body: string | Uint8Array }> = {
  "/": { type: "text/html; charset=utf-8", body: html },
  "/page.js": { type: "text/javascript; charset=utf-8", body: script },
  "/page.css": { type: "text/css; charset=utf-8", body: stylesheet },
};

const server = http.createServer((request, response) => {
  const file = files[new URL(request.url ?? "/", "http://page").pathname];
  if (request.method !== "GET" || !file) return void response.writeHead(404, { "content-type": "text/plain" }).end("not found");
  response.writeHead(200, { "content-type": file.type, "content-security-policy": policy, "referrer-policy": "no-referrer", "x-content-type-options": "nosniff" }).end(file.body);
});
server.listen(port, "127.0.0.1", () => {
  console.log(`your customer's page at http://127.0.0.1:${port}/?token=<tracking token> (Fenceline must list http://127.0.0.1:${port} in FENCELINE_TRACK_ORIGINS)`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
