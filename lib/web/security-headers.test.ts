/**
 * What the policy builder decides on its own, before any server: the toaster's stylesheet
 * passes the document policy (its hashes are recomputed from the installed sonner, so an
 * upgrade that changes it fails here rather than in a browser), eval is allowed only under
 * `next dev`, HSTS only behind https, and only tracking paths drop the referrer.
 * lib/web/proxy.scenario.test.ts reads the same headers back from a running server.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { expect, test } from "vitest";
import { contentSecurityPolicy, securityHeaders, SONNER_STYLE_HASHES } from "./security-headers";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

test("the policy allows exactly the stylesheets sonner inserts, the empty one included", () => {
  const source = readFileSync(createRequire(import.meta.url).resolve("sonner"), "utf8");
  const inserted = [...source.matchAll(/__insertCSS\(("(?:[^"\\]|\\.)*")\)/g)].map((match) => JSON.parse(match[1]!) as string);
  expect(inserted).toHaveLength(1);
  expect([...SONNER_STYLE_HASHES].sort()).toEqual([sha256(""), sha256(inserted[0]!)].sort());
  const styles = contentSecurityPolicy("document", { nonce: "n0nce", development: false }).split("; ").find((directive) => directive.startsWith("style-src "));
  for (const hash of SONNER_STYLE_HASHES) expect(styles).toContain(hash);
});

test("only next dev may eval, and only behind https is there HSTS", () => {
  const scripts = (development: boolean) => contentSecurityPolicy("document", { nonce: "n0nce", development }).split("; ").find((directive) => directive.startsWith("script-src "));
  expect(scripts(false)).not.toContain("'unsafe-eval'");
  expect(scripts(true)).toContain("'unsafe-eval'");
  expect(securityHeaders("/", { development: false, publicUrl: "http://127.0.0.1:3000" })["strict-transport-security"]).toBeUndefined();
  expect(securityHeaders("/", { development: false })["strict-transport-security"]).toBeUndefined();
  expect(securityHeaders("/", { development: false, publicUrl: "https://ops.example" })["strict-transport-security"]).toMatch(/^max-age=\d+/);
});

test("the tracking page and its API send no referrer; a path that only begins alike does", () => {
  const referrer = (pathname: string) => securityHeaders(pathname, { development: false })["referrer-policy"];
  for (const pathname of ["/track/abc", "/track", "/api/track/abc", "/api/track"]) expect(referrer(pathname), pathname).toBe("no-referrer");
  for (const pathname of ["/tracking", "/api/tracks", "/review/track", "/"]) expect(referrer(pathname), pathname).toBe("strict-origin-when-cross-origin");
});
