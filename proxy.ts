/**
 * Every request passes here first (no matcher: pages, route handlers, the worker protocol and
 * static assets). It refuses a path Next could not decode, then forwards the request with the
 * security headers of lib/web/security-headers.ts on its response; a document's request also
 * carries its policy, from which Next takes the nonce for its own scripts.
 */
import { NextResponse, type NextRequest } from "next/server";
import { problem } from "@/lib/api/problems";
import { describeUnreadableSegment, unreadableSegment } from "@/lib/web/readable-path";
import { NONCE_HEADER, newNonce, responseKind, securityHeaders } from "@/lib/web/security-headers";

// Next's own route for the app's not-found page: an unreadable link names nothing.
const NOT_FOUND_ROUTE = "/_not-found";

export function proxy(request: NextRequest): Response {
  const { pathname } = request.nextUrl;
  const kind = responseKind(pathname);
  const nonce = kind === "document" ? newNonce() : undefined;
  const headers = securityHeaders(pathname, {
    nonce,
    development: process.env.NODE_ENV === "development",
    publicUrl: process.env.FENCELINE_PUBLIC_URL,
  });
  const unreadable = unreadableSegment(pathname);

  let response: Response;
  if (unreadable !== undefined && kind === "api") {
    response = problem("unreadable-path", describeUnreadableSegment(unreadable));
  } else {
    const requestHeaders = new Headers(request.headers);
    requestHeaders.delete(NONCE_HEADER);
    if (nonce) {
      requestHeaders.set(NONCE_HEADER, nonce);
      requestHeaders.set("content-security-policy", headers["content-security-policy"]);
    }
    const init = { request: { headers: requestHeaders } };
    response = unreadable !== undefined ? NextResponse.rewrite(new URL(NOT_FOUND_ROUTE, request.url), init) : NextResponse.next(init);
  }
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}
