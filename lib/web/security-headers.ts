/**
 * The browser-side defences every response carries, decided from its path alone: proxy.ts
 * applies them to pages, route handlers, the worker protocol and static assets alike.
 *
 * A document (any path outside /api and /_next/static) gets a Content-Security-Policy whose
 * scripts must carry this request's nonce: Next reads the nonce from the policy and puts it on
 * its own scripts, and whatever those scripts load is trusted through 'strict-dynamic'. Every
 * other response is data, not a document, so its policy allows nothing at all. No page may be
 * framed: the tracking page's embedding path is the projection hook and component, not an
 * iframe.
 */

export type ResponseKind = "document" | "api" | "asset";

/** The request header that carries the nonce to the root layout (for next-themes' inline script). */
export const NONCE_HEADER = "x-nonce";

export interface SecurityHeaderOptions {
  /** This request's script nonce; documents only. */
  readonly nonce?: string;
  /** `next dev`: React needs eval for its debugging aids, and styles arrive inline. */
  readonly development: boolean;
  /** FENCELINE_PUBLIC_URL: an https URL adds HSTS and upgrades any plain-http subresource. */
  readonly publicUrl?: string;
  /** data: images allowed (the HTTP API's reference page); set by securityHeaders from the path. */
  readonly dataImages?: boolean;
}

/** The page that renders the HTTP API (app/reference/api, lib/web/api-reference.ts). */
export const API_REFERENCE_PAGE = "/reference/api";

// sonner (the toaster) inserts its stylesheet as a <style> element without a nonce: first empty,
// then with its text. These are the hashes of both as sonner 2.0.8 ships them;
// security-headers.test.ts recomputes them from the installed package.
export const SONNER_STYLE_HASHES = ["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", "'sha256-StEaX+se6YS7pqjzrzMIA0KaX9zF/8zAhvQXZAe5epY='"];

// Features the app never uses. Clipboard stays: the tracking page copies its reference.
const DENIED_FEATURES = [
  "accelerometer",
  "autoplay",
  "camera",
  "display-capture",
  "encrypted-media",
  "fullscreen",
  "geolocation",
  "gyroscope",
  "hid",
  "idle-detection",
  "magnetometer",
  "microphone",
  "midi",
  "payment",
  "picture-in-picture",
  "publickey-credentials-get",
  "screen-wake-lock",
  "serial",
  "usb",
  "xr-spatial-tracking",
];

const HSTS = "max-age=31536000";

export function responseKind(pathname: string): ResponseKind {
  if (pathname === "/api" || pathname.startsWith("/api/")) return "api";
  if (pathname.startsWith("/_next/static/")) return "asset";
  return "document";
}

/** Where the URL itself is the end user's credential, no referrer may carry it elsewhere. */
function referrerPolicy(pathname: string): string {
  return /^\/(api\/)?track(\/|$)/.test(pathname) ? "no-referrer" : "strict-origin-when-cross-origin";
}

const isHttps = (publicUrl: string | undefined) => publicUrl?.toLowerCase().startsWith("https:") ?? false;

export function contentSecurityPolicy(kind: ResponseKind, options: SecurityHeaderOptions): string {
  const directives: [string, ...string[]][] =
    kind === "document"
      ? [
          ["default-src", "'self'"],
          // 'self' is for browsers without 'strict-dynamic', which ignore it otherwise.
          ["script-src", "'self'", ...(options.nonce ? [`'nonce-${options.nonce}'`] : []), "'strict-dynamic'", ...(options.development ? ["'unsafe-eval'"] : [])],
          ["style-src", "'self'", ...(options.development ? ["'unsafe-inline'"] : [...(options.nonce ? [`'nonce-${options.nonce}'`] : []), ...SONNER_STYLE_HASHES])],
          // Loosened: React renders style props as attributes in server HTML, and recharts has
          // no other way to size its charts. An attribute cannot load anything or run script.
          ["style-src-attr", "'unsafe-inline'"],
          ["connect-src", "'self'"],
          // Loosened on the HTTP API's reference page only: Swagger UI draws its icons as data:
          // images. An image cannot run script.
          ...(options.dataImages ? ([["img-src", "'self'", "data:"]] as [string, ...string[]][]) : []),
          ["object-src", "'none'"],
          ["base-uri", "'none'"],
          ["form-action", "'self'"],
          ["frame-ancestors", "'none'"],
        ]
      : [
          ["default-src", "'none'"],
          ["base-uri", "'none'"],
          ["form-action", "'none'"],
          ["frame-ancestors", "'none'"],
        ];
  if (isHttps(options.publicUrl)) directives.push(["upgrade-insecure-requests"]);
  return directives.map((directive) => directive.join(" ")).join("; ");
}

export interface SecurityHeaders {
  readonly "content-security-policy": string;
  readonly [name: string]: string;
}

export function securityHeaders(pathname: string, options: SecurityHeaderOptions): SecurityHeaders {
  return {
    "content-security-policy": contentSecurityPolicy(responseKind(pathname), { ...options, dataImages: pathname === API_REFERENCE_PAGE }),
    "x-content-type-options": "nosniff",
    "referrer-policy": referrerPolicy(pathname),
    "permissions-policy": DENIED_FEATURES.map((feature) => `${feature}=()`).join(", "),
    // For browsers that predate frame-ancestors.
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    ...(isHttps(options.publicUrl) ? { "strict-transport-security": HSTS } : {}),
  };
}

/** A fresh script nonce: 128 random bits, base64. */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}
