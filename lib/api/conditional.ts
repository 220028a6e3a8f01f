/**
 * Conditional reads for views that are polled: the answer carries a strong ETag (a digest of its
 * body), and a request whose If-None-Match names it gets a bodiless 304. A page polling every
 * few seconds then costs a few hundred bytes per unchanged poll, and its browser does the
 * revalidation itself when Cache-Control lets it keep the answer (`no-cache`: keep, but ask).
 */
import { createHash } from "node:crypto";
import type { z } from "zod";

/** A strong validator of the exact bytes sent. */
export function etagOf(body: string): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
}

/** If-None-Match matches when it is `*` or lists the tag (weak comparison, as RFC 9110 asks for this header). */
export function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const bare = etag.replace(/^W\//, "");
  return header.split(",").some((candidate) => {
    const tag = candidate.trim();
    return tag === "*" || tag.replace(/^W\//, "") === bare;
  });
}

/** A JSON answer shaped by its schema, or a 304 when the client already holds exactly it. */
export function conditionalJson<S extends z.ZodType>(
  request: Request,
  schema: S,
  data: z.input<S>,
  init: { readonly cacheControl: string; readonly headers?: Record<string, string> },
): Response {
  const body = JSON.stringify(schema.parse(data));
  const etag = etagOf(body);
  const headers = { ...init.headers, etag, "cache-control": init.cacheControl };
  if (matchesIfNoneMatch(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { status: 200, headers: { ...headers, "content-type": "application/json" } });
}

/**
 * conditionalJson for an answer that carries a field which changes on every read (the database
 * clock it was read at): the ETag is weak, a digest of `stable` (the answer without that field),
 * so an answer that differs only there is "the same" and costs a 304. The client keeps the body
 * it holds, and with it the clock of its last full answer.
 */
export function weakConditionalJson<S extends z.ZodType>(
  request: Request,
  schema: S,
  data: z.input<S>,
  stable: unknown,
  init: { readonly cacheControl: string },
): Response {
  const etag = `W/${etagOf(JSON.stringify(stable))}`;
  const headers = { etag, "cache-control": init.cacheControl };
  if (matchesIfNoneMatch(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(JSON.stringify(schema.parse(data)), { status: 200, headers: { ...headers, "content-type": "application/json" } });
}
